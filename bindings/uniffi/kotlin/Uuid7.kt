// Hand-written over the generated bindings (idforge_uniffi.kt): the UUIDv7 codecs in one object,
// so Java calls them as `Uuid7.parse(text)` (the generated functions live in `Idforge_uniffiKt`).
package dev.idforge

import java.nio.ByteBuffer
import java.time.Instant
import java.util.UUID

/**
 * UUIDv7 (RFC 9562) as `java.util.UUID`; fresh ones come from [Uuid7s].
 *
 * Order: a generator's UUIDs increase as unsigned 128-bit numbers, as bytes and as text.
 * `UUID.compareTo` compares the two halves as *signed* longs; for UUIDv7s that is the same order
 * up to the year 6429 (the lower half always starts with the variant bit 1, and the upper half's
 * sign bit is the top bit of the 48-bit millisecond). [UNSIGNED_ORDER] is the order of the
 * bytes for every UUID, e.g. to sort UUIDs of other versions with them.
 */
object Uuid7 {
    /** Parses hyphenated, 32-digit, braced or `urn:uuid:` text, either case; another version or variant is `InvalidUuid`. */
    @JvmStatic @Throws(IdforgeException::class) fun parse(text: String): UUID = uuid7Parse(text)

    /** The UUIDv7 of 16 big-endian bytes (`InvalidLength`, `InvalidUuid`). */
    @JvmStatic @Throws(IdforgeException::class) fun fromBytes(bytes: ByteArray): UUID = uuid7FromBytes(bytes)

    /** The 16 big-endian bytes of any UUID. */
    @JvmStatic fun toBytes(uuid: UUID): ByteArray =
        ByteBuffer.allocate(16).putLong(uuid.mostSignificantBits).putLong(uuid.leastSignificantBits).array()

    /** The UUIDv7 of (Unix ms, 12-bit rand_a, 62-bit rand_b): for range queries and tests, not for issuing ids. */
    @JvmStatic @Throws(IdforgeException::class) fun fromFields(timeMs: Long, randA: Int, randB: Long): UUID = uuid7FromFields(timeMs, randA, randB)

    /** The fields (`InvalidUuid` for another version). */
    @JvmStatic @Throws(IdforgeException::class) fun fields(uuid: UUID): Uuid7Fields = uuid7Fields(uuid)

    /** The Unix milliseconds (`InvalidUuid` for another version). */
    @JvmStatic @Throws(IdforgeException::class) fun timeMs(uuid: UUID): Long = uuid7TimeMs(uuid)

    /** The creation time (`InvalidUuid` for another version). */
    @JvmStatic @Throws(IdforgeException::class) fun time(uuid: UUID): Instant = Instant.ofEpochMilli(uuid7TimeMs(uuid))

    /** The same 128 bits as ULID text (`InvalidUuid` for another version). */
    @JvmStatic @Throws(IdforgeException::class) fun toUlid(uuid: UUID): String = uuid7ToUlid(uuid)

    /** The UUIDv7 written as ULID text (`InvalidBase32`, `InvalidUuid`). */
    @JvmStatic @Throws(IdforgeException::class) fun fromUlid(text: String): UUID = uuid7FromUlid(text)

    /** UUIDs as unsigned 128-bit numbers (the order of their bytes and text). */
    @JvmField val UNSIGNED_ORDER: Comparator<UUID> = Comparator { a, b ->
        val high = java.lang.Long.compareUnsigned(a.mostSignificantBits, b.mostSignificantBits)
        if (high != 0) high else java.lang.Long.compareUnsigned(a.leastSignificantBits, b.leastSignificantBits)
    }
}
