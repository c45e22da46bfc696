// The LSP base protocol: messages framed by a `Content-Length: N` header block and N bytes of
// JSON body.
#pragma once

#include <cstddef>
#include <istream>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace mk::lsp {

// A body larger than this is refused (its header is reported as bad and the body skipped).
inline constexpr size_t kMaxMessageBytes = size_t{256} << 20;

struct ReadResult {
  enum Status {
    Message,    // `body` holds one message
    End,        // the input ended (also in the middle of a message)
    BadHeader,  // a header block without a usable Content-Length; `error` says why
  } status = End;
  std::string body;
  std::string error;
};

// Reads the next framed message. Header names are case-insensitive; lines may end in "\r\n" or
// "\n"; Content-Type and unknown headers are ignored; blank lines before a header are skipped.
ReadResult readMessage(std::istream& in);

// Writes `body` with its Content-Length header.
void writeMessage(std::ostream& out, std::string_view body);
std::string frame(std::string_view body);

// An input stream buffer over a file descriptor whose in_avail() tells whether more input is
// already waiting (buffered, or readable without blocking): the server reads ahead while it is,
// so it can drop cancelled requests and coalesce diagnostics during rapid edits.
class FdInBuf : public std::streambuf {
 public:
  explicit FdInBuf(int fd) : fd_(fd), buf_(1 << 16) {}

 protected:
  int_type underflow() override;
  std::streamsize showmanyc() override;
  std::streamsize xsgetn(char* s, std::streamsize n) override;

 private:
  int fd_;
  std::vector<char> buf_;
};

}  // namespace mk::lsp
