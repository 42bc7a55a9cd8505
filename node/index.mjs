// The ES module face of the package: the same objects as the CommonJS index.js.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const idforge = require('./index.js')

export const {
  Snowflake,
  Layout,
  ObjectId,
  Flake128,
  Flake128Generator,
  Segments,
  ErrorCode,
  errorTable,
  errorCodes,
  version,
  noop,
} = idforge
export default idforge
