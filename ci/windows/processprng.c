/* Test scaffolding for Wine 8, never shipped: Rust's std (1.78+) and getrandom 0.3 import
 * ProcessPrng from bcryptprimitives.dll, which Windows 10+ has and Wine 8 lacks. This DLL,
 * placed beside the .exe under test, gives it over RtlGenRandom (SystemFunction036), which Wine
 * has. Built by ci/steps/windows.sh with x86_64-w64-mingw32-gcc. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x40000000u ? 0x40000000u : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
