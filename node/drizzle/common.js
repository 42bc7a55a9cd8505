'use strict'
// What idforge/drizzle/pg and idforge/drizzle/sqlite share: loading drizzle-orm (an optional
// peer dependency) with a message that says what to install, and the snowflake column's check.
const { ErrorCode, idforgeError } = require('../errors.js')

/** drizzle-orm/DIALECT-core, or an error naming the package to install. */
function loadCore(dialect) {
  try {
    return require(`drizzle-orm/${dialect}-core`)
  } catch (e) {
    throw new Error(`idforge/drizzle/${dialect} needs drizzle-orm: npm install drizzle-orm`, { cause: e })
  }
}

/** `ids` when it can make ids (`next()`), else IDFORGE_INVALID_ARGUMENT naming the column. */
function needGenerator(ids, name) {
  if (!ids || typeof ids.next !== 'function') {
    throw idforgeError(ErrorCode.INVALID_ARGUMENT, `snowflake('${name}', ids) needs a Snowflake generator`)
  }
  return ids
}

module.exports = { loadCore, needGenerator }
