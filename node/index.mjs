// The ES module face of the package: the same objects as the CommonJS index.js.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const idforge = require('./index.js')

export const {
  json,
  Snowflake,
  Layout,
  ObjectId,
  Flake128,
  Flake128Generator,
  Segments,
  Uuid7s,
  Ulids,
  uuid7,
  uuid7Bytes,
  parseUuid7,
  stringifyUuid7,
  uuid7Fields,
  uuid7FromFields,
  idToText,
  idFromText,
  TEXT_FORMS,
  describeId,
  ID_TYPES,
  ulid,
  parseUlid,
  ulidFields,
  ulidFromFields,
  ulidToUuid,
  uuidToUlid,
  ErrorCode,
  errorTable,
  errorCodes,
  version,
  noop,
} = idforge
export default idforge
