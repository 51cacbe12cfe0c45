// Prints the generated tables of docs/analytical.md between their markers; paste each block over
// the one in the document when the model changes (docs_table_test fails until then).
#include <iostream>

#include "docs_table.h"

int main() {
  using namespace simfa::analytical::testing;
  std::cout << kKeysTableBegin << keys_table() << kKeysTableEnd << "\n"
            << kDramTableBegin << dram_table() << kDramTableEnd << "\n"
            << kFieldsTableBegin << fields_table() << kFieldsTableEnd;
}
