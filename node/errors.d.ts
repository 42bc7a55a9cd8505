// The errors idforge throws; the codes and the table are generated (error_codes.d.ts).
import type { IdforgeErrorCode } from './error_codes'

export { ErrorCode, IdforgeErrorCode, errorTable } from './error_codes'

/**
 * An error thrown by idforge: a plain `Error` whose `code` says which (`IDFORGE_` and the
 * name of errors.json, the same name in every language) and whose `status` is that code's
 * number (the C status, Python's `code`, Kotlin's `status`).
 */
export interface IdforgeError extends Error {
  code: IdforgeErrorCode
  status: number
}
