// The accelkv command-line tool; see tools/cli.h and docs/cli.md.
#include <iostream>

#include "tools/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const int code = accelkv::cli::RunCli(argc, argv, std::cout, std::cerr);
  std::cout.flush();
  return code;
}
