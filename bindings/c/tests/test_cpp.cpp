// The header from C++ (g++ -std=c++11): it compiles, links and the calls work. The full suite is
// C (test_idforge.c); this checks the header's C++ side (extern "C", enum types).
#include <cstdio>
#include <cstring>

#include "idforge.h"

int main() {
  int failed = 0;
  idforge_snowflake *g = nullptr;
  uint64_t a = 0, b = 0;
  if (idforge_snowflake_new_preset(IDFORGE_PRESET_DISCORD, 1, &g) != IDFORGE_STATUS_OK) failed++;
  if (idforge_snowflake_next(g, &a) != IDFORGE_STATUS_OK) failed++;
  if (idforge_snowflake_next(g, &b) != IDFORGE_STATUS_OK || b <= a) failed++;
  idforge_snowflake_free(g);

  uint8_t oid[IDFORGE_OBJECTID_LEN];
  char hex[IDFORGE_OBJECTID_HEX_LEN + 1];
  if (idforge_objectid_generate(oid) != IDFORGE_STATUS_OK) failed++;
  if (idforge_objectid_to_hex(oid, hex, sizeof hex) != IDFORGE_STATUS_OK) failed++;
  if (std::strlen(hex) != IDFORGE_OBJECTID_HEX_LEN) failed++;

  idforge_status st = idforge_objectid_from_hex("xyz", oid);
  if (st != IDFORGE_STATUS_INVALID_HEX) failed++;
  if (std::strcmp(idforge_status_str(st), "IDFORGE_STATUS_INVALID_HEX") != 0) failed++;

  idforge_uuid7 *u = nullptr;
  uint8_t uuid[IDFORGE_UUID7_LEN], back[IDFORGE_UUID7_LEN];
  char text[IDFORGE_UUID7_TEXT_LEN + 1];
  if (idforge_uuid7_new(&u) != IDFORGE_STATUS_OK || idforge_uuid7_next(u, uuid) != IDFORGE_STATUS_OK) failed++;
  if (idforge_uuid7_to_text(uuid, text, sizeof text) != IDFORGE_STATUS_OK) failed++;
  if (idforge_uuid7_parse(text, back) != IDFORGE_STATUS_OK || std::memcmp(uuid, back, sizeof uuid) != 0) failed++;
  idforge_uuid7_free(u);

  std::printf("%d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
  return failed ? 1 : 0;
}
