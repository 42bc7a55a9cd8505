// Hand-written over the generated bindings (idforge_uniffi.kt): the ULID codecs in one object,
// so Java calls them as `Ulid.parse(text)` (the generated functions live in `Idforge_uniffiKt`).
package dev.idforge

import java.time.Instant
import java.util.UUID

/** ULIDs as their text (26 characters of Crockford base32, sorting like the ids); fresh ones come from [Ulids]. */
object Ulid {
    /** The canonical upper-case text of 26 characters, either case, with Crockford's aliases (`InvalidBase32`). */
    @JvmStatic @Throws(IdforgeException::class) fun parse(text: String): String = ulidParse(text)

    /** The Unix milliseconds (`InvalidBase32`). */
    @JvmStatic @Throws(IdforgeException::class) fun timeMs(text: String): Long = ulidTimeMs(text)

    /** The creation time (`InvalidBase32`). */
    @JvmStatic @Throws(IdforgeException::class) fun time(text: String): Instant = Instant.ofEpochMilli(ulidTimeMs(text))

    /** The 16 big-endian bytes (`InvalidBase32`). */
    @JvmStatic @Throws(IdforgeException::class) fun toBytes(text: String): ByteArray = ulidToBytes(text)

    /** The text of 16 bytes (`InvalidLength`). */
    @JvmStatic @Throws(IdforgeException::class) fun fromBytes(bytes: ByteArray): String = ulidFromBytes(bytes)

    /** The same 128 bits as a `UUID` (a UUIDv7 when the ULID came from one). */
    @JvmStatic @Throws(IdforgeException::class) fun toUUID(text: String): UUID = ulidToUuid(text)

    /** The ULID text of a UUID's 128 bits. */
    @JvmStatic fun fromUUID(uuid: UUID): String = ulidFromUuid(uuid)
}
