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

/** This id as a `UUID` (same 128 bits). */
fun Flake128.toUUID(): UUID = UUID(high(), low())

/** This id's unsigned 128-bit value. */
fun Flake128.toBigInteger(): BigInteger = BigInteger(1, toBytes())

/** The flake-128 id with the bits of `uuid`. */
fun flake128Of(uuid: UUID): Flake128 = Flake128.fromHalves(uuid.mostSignificantBits, uuid.leastSignificantBits)

/** `n` fresh ids as a primitive array. */
fun Snowflake.nextManyArray(n: Int): LongArray = nextMany(n).toLongArray()
