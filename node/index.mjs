// The ES module face of the package: the same objects as the CommonJS index.js, whose named
// exports Node finds in its \`module.exports = { ... }\` literal.
import idforge from './index.js'

export * from './index.js'
export default idforge
