// A per-SM timeline of a megakernel's static schedule, as one self-contained HTML file (inline SVG
// and CSS; no scripts, no external resources): one lane per SM, tasks as boxes in queue order with
// widths proportional to their estimated time (bytes / (bandwidth / sms)), colored by op, with
// tooltips; a sample of the waits drawn as lines from producer to consumer; a legend of ops.
#pragma once

#include <string>

#include "ir/megakernel.h"

namespace mk::ir {

struct HtmlOptions {
  int maxLines = 2000;    // dependency lines drawn at most; the rest are counted in the caption
  int plotWidth = 1400;   // pixels of the time axis
};

std::string scheduleHtml(const Megakernel& mk, const HtmlOptions& options = {});

}  // namespace mk::ir
