# Writes OUT, a header defining `constexpr std::string_view NAME` with the
# contents of IN (the dashboard's page, built into the binary).
file(READ ${IN} text)
string(FIND "${text}" ")SHOAL_EMBED\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string's delimiter")
endif()
file(WRITE ${OUT}.tmp "// Generated from ${IN} by cmake/embed.cmake.\n#pragma once\n#include <string_view>\n"
     "constexpr std::string_view ${NAME} = R\"SHOAL_EMBED(${text})SHOAL_EMBED\";\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
