@file:JvmName("Idforge")

// Hand-written helpers over the generated bindings (idforge_uniffi.kt): the stable error codes
// and conversions to JVM types uniffi has no mapping for. From Java: `Idforge.getCode(e)`,
// `Idforge.toUUID(flake)`.
package dev.idforge

import java.math.BigInteger
import java.util.UUID

/** The stable name of this error's code, as in errors.json (`INVALID_LAYOUT`). */
val IdforgeException.code: String
    get() = entry().second

/** The C `idforge_status` value of this error's code. */
val IdforgeException.status: Int
    get() = entry().first

// Exhaustive over the sealed class: a code added in Rust fails this file's compilation.
private fun IdforgeException.entry(): Pair<Int, String> = when (this) {
    is IdforgeException.InvalidLayout -> 1 to "INVALID_LAYOUT"
    is IdforgeException.NodeOutOfRange -> 2 to "NODE_OUT_OF_RANGE"
    is IdforgeException.EpochInFuture -> 3 to "EPOCH_IN_FUTURE"
    is IdforgeException.TimeOutOfRange -> 4 to "TIME_OUT_OF_RANGE"
    is IdforgeException.SequenceOutOfRange -> 5 to "SEQUENCE_OUT_OF_RANGE"
    is IdforgeException.InvalidHex -> 6 to "INVALID_HEX"
    is IdforgeException.InvalidBase62 -> 7 to "INVALID_BASE62"
    is IdforgeException.InvalidBase32 -> 8 to "INVALID_BASE32"
    is IdforgeException.InvalidDecimal -> 9 to "INVALID_DECIMAL"
    is IdforgeException.InvalidLength -> 10 to "INVALID_LENGTH"
    is IdforgeException.InvalidArgument -> 11 to "INVALID_ARGUMENT"
    is IdforgeException.ClockBehind -> 12 to "CLOCK_BEHIND"
    is IdforgeException.Timeout -> 13 to "TIMEOUT"
    is IdforgeException.Forked -> 14 to "FORKED"
    is IdforgeException.InvalidSegment -> 15 to "INVALID_SEGMENT"
    is IdforgeException.BufferFull -> 16 to "BUFFER_FULL"
    is IdforgeException.Overflow -> 17 to "OVERFLOW"
    is IdforgeException.SourceUnavailable -> 18 to "SOURCE_UNAVAILABLE"
    is IdforgeException.Io -> 19 to "IO"
    is IdforgeException.InvalidUrl -> 20 to "INVALID_URL"
    is IdforgeException.LeaseLost -> 21 to "LEASE_LOST"
    is IdforgeException.NullArgument -> 100 to "NULL_ARGUMENT"
    is IdforgeException.Panic -> 101 to "PANIC"
    is IdforgeException.BufferTooSmall -> 102 to "BUFFER_TOO_SMALL"
}

/** This id as a `UUID` (same 128 bits). */
fun Flake128.toUUID(): UUID = UUID(high(), low())

/** This id's unsigned 128-bit value. */
fun Flake128.toBigInteger(): BigInteger = BigInteger(1, toBytes())

/** The flake-128 id with the bits of `uuid`. */
fun flake128Of(uuid: UUID): Flake128 = Flake128.fromHalves(uuid.mostSignificantBits, uuid.leastSignificantBits)

/** `n` fresh ids as a primitive array. */
fun Snowflake.nextManyArray(n: Int): LongArray = nextMany(n).toLongArray()
