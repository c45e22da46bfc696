// Reads the text form of a megakernel that printSchedule (ir/print.h) writes, so schedules can be
// written or edited by hand (golden tests, `mkdsl verify FILE`). Round trip:
// printSchedule(*parseSchedule(printSchedule(m))) == printSchedule(m). Tile function bodies are not
// part of the text: parsed funcs have a name, op, task grid and parameters, and an empty body.
//
// Grammar. Line-oriented: one item per line; `//` starts a comment; blank lines are ignored.
// NAME is an identifier or a "quoted string" (escapes \" \\ \n \t \xHH); INT an integer, NUM a
// number (also inf, -inf, nan). References: tensors t<id>, funcs f<id>, nodes n<id>, counters
// c<id>; tasks are plain ids. Sections may come in any order; a header line is its keyword alone.
//
//   program NAME                              config NAME
//   target NAME arch NAME sms INT smem INT warp INT threads INT bandwidth NUM     (required)
//   tensors
//     t<id> NAME KIND DTYPE[dims] LAYOUT [sources NAME, ...]
//         KIND: weight | state | activation | input;  DTYPE: bf16 f16 f32 i32 bool;  dims: INT, ...
//         LAYOUT: row_major | col_major | tiled | interleave | padded | swizzle, optionally (INT, ...)
//   inputs
//     NAME DTYPE [t<id>]                      (a step input, with its tensor if it has one)
//   outputs
//     NAME t<id>
//   funcs
//     f<id> NAME op NAME grid [INT, ...] as (NAME, ...) params (PARAM, ...)
//         PARAM: NAME ":" (tensor | inout | scalar | result) DTYPE[dims]
//   nodes
//     n<id> = f<id> OP (ARG, ...) [after (t<id>, ...)] [sync grid] [cluster INT]
//         ARG: t<id> | input INT | const NUM | scalar t<id>      (one per func parameter)
//         `n<id> = none (ARG, ...)` for a node without a func; OP must be the func's op.
//   memory weights INT state INT activations INT smem_per_task INT
//     (weight | state | activation) t<id> at INT size INT          (the buffers, in order)
//   counters
//     c<id> expects INT [from tasks IDS] [why NAME]
//         IDS: ID or ID-ID (inclusive), comma separated, in order; expects = how many are listed
//   queues
//     sm INT ":"                              (sm 0, sm 1, ... in order; empty queues too)
//       task ID OP#NODE[INT, ...] [sm INT] [wait c<id>,...] [signal c<id>,...] bytes INT flops INT
//            [reads REGION, ...] [writes REGION, ...]
//       task ID                               (a task whose fields are given elsewhere)
//     unqueued ":"                            (tasks in no queue; their sm given explicitly or -1)
//         REGION: t<id>[lo..hi, ...]  (half-open per dimension)
//   order ID ...                              (the global task order; default: ascending ids)
//
// A task's `sm` defaults to the queue that defines it. Every id is checked: references must name
// something defined, definitions must be unique. Errors are reported as file:line:col with what
// was expected and what was found; the result is nullopt when any error was reported.
#pragma once

#include <optional>
#include <string_view>

#include "ir/megakernel.h"
#include "support/diagnostics.h"
#include "support/source.h"

namespace mk::ir {

// `text` must be the text of `file` in diags.sources() (locations are byte offsets into it).
std::optional<Megakernel> parseSchedule(std::string_view text, DiagnosticEngine& diags, FileId file);

}  // namespace mk::ir
