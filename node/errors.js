'use strict'
// The errors idforge throws, built from the generated codes and table (error_codes.js, written
// from core/testdata/errors.json by scripts/gen-errors.mjs).

const { ErrorCode, errorTable } = require('./error_codes.js')

/** `error.code` -> `error.status`. */
const STATUS = Object.freeze(Object.fromEntries(errorTable.map((r) => [r.code, r.status])))

/** An `Error` with `code` and `status` set, as the native addon throws them. */
function idforgeError(code, message) {
  const e = new Error(message)
  e.code = code
  e.status = STATUS[code]
  return e
}

module.exports = { ErrorCode, errorTable, idforgeError }
