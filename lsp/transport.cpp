#include "lsp/transport.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace mk::lsp {

namespace {
constexpr size_t kMaxHeaderLine = 8192;

// One header line without its terminator; false at the end of the input. Overlong lines are
// read to their end and come back truncated (they are no valid header anyway).
bool readLine(std::istream& in, std::string& line) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  bool any = false;
  for (;;) {
    auto c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') break;
    if (line.size() < kMaxHeaderLine) line += static_cast<char>(c);
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}
}  // namespace

ReadResult readMessage(std::istream& in) {
  ReadResult r;
  std::string line;
  bool sawHeader = false;
  bool haveLength = false;
  size_t length = 0;
  std::string problem;
  for (;;) {
    if (!readLine(in, line)) {
      r.status = ReadResult::End;
      return r;
    }
    if (line.empty()) {
      if (!sawHeader) continue;  // stray blank lines between messages
      break;
    }
    sawHeader = true;
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (problem.empty()) problem = "malformed header line '" + line.substr(0, 80) + "'";
      continue;
    }
    std::string name = lower(trim(line.substr(0, colon)));
    std::string value = trim(line.substr(colon + 1));
    if (name != "content-length") continue;
    bool digits = !value.empty() && value.size() <= 12 &&
                  std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      if (problem.empty()) problem = "Content-Length '" + value.substr(0, 40) + "' is not a number";
      continue;
    }
    length = std::stoull(value);
    haveLength = true;
  }
  if (!haveLength || !problem.empty()) {
    r.status = ReadResult::BadHeader;
    r.error = !problem.empty() ? problem : "the header has no Content-Length";
    return r;
  }
  if (length > kMaxMessageBytes) {
    r.status = ReadResult::BadHeader;
    r.error = "Content-Length " + std::to_string(length) + " is larger than the limit of " +
              std::to_string(kMaxMessageBytes) + " bytes";
    return r;
  }
  r.body.resize(length);
  in.read(r.body.data(), static_cast<std::streamsize>(length));
  if (static_cast<size_t>(in.gcount()) != length) {
    r.status = ReadResult::End;
    r.body.clear();
    return r;
  }
  r.status = ReadResult::Message;
  return r;
}

std::string frame(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

void writeMessage(std::ostream& out, std::string_view body) {
  out << "Content-Length: " << body.size() << "\r\n\r\n";
  out.write(body.data(), static_cast<std::streamsize>(body.size()));
  out.flush();
}

FdInBuf::int_type FdInBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  for (;;) {
    ssize_t n = ::read(fd_, buf_.data(), buf_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return traits_type::eof();
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(*gptr());
  }
}

std::streamsize FdInBuf::showmanyc() {
  pollfd p{fd_, POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  // Readable (data or the end of the input): at least one more read will not block.
  return n > 0 && (p.revents & (POLLIN | POLLHUP)) ? 1 : 0;
}

std::streamsize FdInBuf::xsgetn(char* s, std::streamsize n) {
  std::streamsize got = 0;
  while (got < n) {
    if (gptr() == egptr() && underflow() == traits_type::eof()) break;
    std::streamsize chunk = std::min<std::streamsize>(n - got, egptr() - gptr());
    std::memcpy(s + got, gptr(), static_cast<size_t>(chunk));
    gbump(static_cast<int>(chunk));
    got += chunk;
  }
  return got;
}

}  // namespace mk::lsp
