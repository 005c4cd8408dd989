// The accelkv tool's usage text (commands, then every option from
// AllOptions()).
//
// Thread safety: pure.
#pragma once

#include <string>

namespace accelkv::cli {

std::string UsageText();

}  // namespace accelkv::cli
