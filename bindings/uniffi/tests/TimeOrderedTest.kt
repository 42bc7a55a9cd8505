// The JVM binding's tests of UUIDv7 (as java.util.UUID), ULID (as text) and snowflakes with a
// random sequence start (ci/steps/jvm.sh compiles this with IdforgeTest.kt, whose helpers and
// runner use it): the shared vectors uuid7.json and ulid.json (fields, parse, refuse; the `stamp`
// rows need the generator's inputs, which the binding does not take), java.util.UUID's own view
// (version, variant, compareTo), threads, a clock set back across a restart, errors.
import dev.idforge.*
import java.io.File
import java.math.BigInteger
import java.util.UUID
import java.util.concurrent.locks.LockSupport
import kotlin.test.assertContentEquals
import kotlin.test.assertEquals
import kotlin.test.assertTrue

val UUID7 = load("uuid7.json")
val ULID = load("ulid.json")

/** `n` ids of `g` made about 1 ms apart (each its tick's first), as their sequence numbers. */
fun lowRateSequences(g: Snowflake, n: Int): List<Long> = List(n) {
    LockSupport.parkNanos(1_100_000)
    g.decode(g.next()).seq
}

/** Writes a state file whose high-water time is `ms`, as one an hour ahead of a clock set back. */
fun stateFileAt(file: File, ms: Long) = file.writeText("idforge-high-water-ms v1\n$ms\n")

val timeOrderedTests = linkedMapOf<String, () -> Unit>(
    "UUIDv7 vectors, and java.util.UUID's own reading of them" to {
        for (r in UUID7.rows("fields")) {
            val u = Uuid7.fromFields(r.u64("time_ms"), r.get("rand_a").asInt, r.str("rand_b").toLong())
            assertEquals(r.str("text"), u.toString())
            assertEquals(r.str("bytes"), hex(Uuid7.toBytes(u)))
            assertEquals(r.str("ulid"), Uuid7.toUlid(u))
            assertEquals(u, Uuid7.parse(r.str("text")))
            assertEquals(u, UUID.fromString(r.str("text")))
            assertEquals(u, Uuid7.fromBytes(unhex(r.str("bytes"))))
            assertEquals(u, Uuid7.fromUlid(r.str("ulid")))
            assertEquals(u, Ulid.toUUID(r.str("ulid")))
            assertEquals(r.str("ulid"), Ulid.fromUUID(u))
            assertEquals(Uuid7Fields(r.u64("time_ms"), r.get("rand_a").asInt, r.str("rand_b").toLong()), Uuid7.fields(u))
            assertEquals(r.u64("time_ms"), Uuid7.timeMs(u))
            assertEquals(7, u.version())
            assertEquals(2, u.variant())
        }
        for (r in UUID7.rows("parse")) assertEquals(r.str("text"), Uuid7.parse(r.str("input")).toString())
        for (r in UUID7.rows("refuse")) throwsCode(r.str("error")) { Uuid7.parse(r.str("input")) }
    },
    "ULID vectors" to {
        for (r in ULID.rows("fields")) {
            val bytes = unhex(r.str("bytes"))
            assertEquals(r.str("text"), Ulid.fromBytes(bytes))
            assertContentEquals(bytes, Ulid.toBytes(r.str("text")))
            assertEquals(r.str("text"), Ulid.parse(r.str("text")))
            assertEquals(r.u64("time_ms"), Ulid.timeMs(r.str("text")))
            assertEquals(BigInteger(r.str("random")), BigInteger(1, bytes.copyOfRange(6, 16)))
        }
        for (r in ULID.rows("parse")) assertEquals(r.str("text"), Ulid.parse(r.str("input")))
        for (r in ULID.rows("refuse")) throwsCode(r.str("error")) { Ulid.parse(r.str("input")) }
    },
    "Uuid7s: java.util.UUID version 7, variant 2, generation order = compareTo order" to {
        val g = Uuid7s()
        val before = System.currentTimeMillis()
        val ids = List(50_000) { g.next() } + g.nextMany(50_000)
        for (u in ids) {
            assertEquals(7, u.version())
            assertEquals(2, u.variant())
        }
        // What a Java user sees: UUID.compareTo (signed halves), the bytes, the text all keep the
        // order the ids were made in.
        for (i in 1 until ids.size) {
            assertTrue(ids[i - 1] < ids[i], "compareTo: ${ids[i - 1]} < ${ids[i]}")
            assertTrue(Uuid7.UNSIGNED_ORDER.compare(ids[i - 1], ids[i]) < 0)
            assertTrue(ids[i - 1].toString() < ids[i].toString())
        }
        assertEquals(ids, ids.shuffled().sorted())
        assertTrue(Math.abs(Uuid7.timeMs(ids.last()) - before) < 60_000)
        assertEquals(Uuid7.timeMs(ids[0]), Uuid7.time(ids[0]).toEpochMilli())
        assertEquals(0, g.nextMany(0).size)
        // compareTo is signed: past 2^47 ms (the year 6429) the upper half turns negative and
        // compareTo puts those UUIDs first; the unsigned order does not.
        val late = Uuid7.fromFields(1L shl 47, 0, 0)
        val early = Uuid7.fromFields((1L shl 47) - 1, 0, 0)
        assertTrue(late < early, "UUID.compareTo is signed")
        assertTrue(Uuid7.UNSIGNED_ORDER.compare(early, late) < 0)
    },
    "Uuid7s from 4 threads: distinct, each thread's increasing" to {
        val g = Uuid7s()
        val perThread = 100_000
        val results = Array(4) { arrayOfNulls<UUID>(perThread) }
        val threads = (0 until 4).map { t ->
            Thread {
                for (i in 0 until perThread) {
                    val u = g.next()
                    if (i > 0) check(results[t][i - 1]!! < u) { "ids of one thread must increase" }
                    results[t][i] = u
                }
            }
        }
        threads.forEach { it.start() }
        threads.forEach { it.join() }
        assertEquals(4 * perThread, results.flatMap { it.toList() }.toSet().size)
    },
    "Ulids: text that sorts like the ids" to {
        val g = Ulids(policy = Policy.WAIT, maxWaitMs = 50)
        val ids = List(10_000) { g.next() } + g.nextMany(10_000)
        for (i in 1 until ids.size) assertTrue(ids[i - 1] < ids[i], "${ids[i - 1]} < ${ids[i]}")
        assertTrue(ids.all { it.length == 26 && Ulid.parse(it) == it })
        assertTrue(Math.abs(Ulid.timeMs(ids[0]) - System.currentTimeMillis()) < 60_000)
        assertEquals(Ulid.timeMs(ids[0]), Ulid.time(ids[0]).toEpochMilli())
    },
    "state file: a clock set back an hour across a restart" to {
        val dir = kotlin.io.path.createTempDirectory("idforge-jvm").toFile()
        try {
            val file = File(dir, "uuid7.state")
            val first = Uuid7s(stateFile = file.path).use { it.next() }
            assertTrue(file.exists())
            val held = System.currentTimeMillis() + 3_600_000
            stateFileAt(file, held)
            throwsCode("CLOCK_BEHIND") { Uuid7s(stateFile = file.path, policy = Policy.ERROR).use { it.next() } }
            val after = Uuid7s(stateFile = file.path, policy = Policy.BORROW, maxWaitMs = 7_200_000).use { it.next() }
            assertTrue(Uuid7.timeMs(after) > held && after > first)
            val ulid = Ulids(stateFile = file.path, policy = Policy.BORROW, maxWaitMs = 7_200_000).use { it.next() }
            assertTrue(Ulid.timeMs(ulid) > held)
        } finally {
            dir.deleteRecursively()
        }
    },
    "UUIDv7 and ULID errors" to {
        throwsCode("INVALID_UUID") { Uuid7.parse("not a uuid") }
        throwsCode("INVALID_UUID") { Uuid7.parse(UUID.randomUUID().toString()) }
        throwsCode("INVALID_UUID") { Uuid7.timeMs(UUID.randomUUID()) }
        throwsCode("INVALID_UUID") { Uuid7.fields(UUID(0, 0)) }
        throwsCode("INVALID_UUID") { Uuid7.toUlid(UUID.randomUUID()) }
        throwsCode("INVALID_UUID") { Uuid7.fromUlid(Ulid.fromUUID(UUID.randomUUID())) }
        throwsCode("INVALID_UUID") { Uuid7.fromBytes(Uuid7.toBytes(UUID.randomUUID())) }
        throwsCode("INVALID_LENGTH") { Uuid7.fromBytes(ByteArray(15)) }
        throwsCode("INVALID_LENGTH") { Ulid.fromBytes(ByteArray(17)) }
        throwsCode("INVALID_BASE32") { Uuid7.fromUlid("not a ulid") }
        throwsCode("INVALID_BASE32") { Ulid.timeMs("01ARYZ6S4128T5CY4TQKFF04HU") }
        throwsCode("TIME_OUT_OF_RANGE") { Uuid7.fromFields(1L shl 48, 0, 0) }
        throwsCode("INVALID_ARGUMENT") { Uuid7.fromFields(0, 4096, 0) }
        throwsCode("INVALID_ARGUMENT") { Uuid7.fromFields(0, -1, 0) }
        throwsCode("INVALID_ARGUMENT") { Uuid7.fromFields(0, 0, -1) }
        throwsCode("INVALID_ARGUMENT") { Uuid7s(maxWaitMs = -1) }
        throwsCode("INVALID_ARGUMENT") { Uuid7s().nextMany(-1) }
        throwsCode("INVALID_ARGUMENT") { Ulids().nextMany(-1) }
        throwsCode("IO") { Uuid7s(stateFile = "/nonexistent-idforge-dir/state") }
        // A Kotlin user catches the subclass itself.
        val e = kotlin.test.assertFailsWith<IdforgeException.InvalidUuid> { Uuid7.parse("") }
        assertEquals(22, e.status)
    },
    "snowflake random_start: a tick's first id no longer ends in sequence 0" to {
        val twitter = Layout.preset("twitter")
        // A policy that never runs ahead reads the precise clock, one tick per id here.
        val plain = Snowflake(twitter, nodeId = 1, policy = Policy.WAIT, maxWaitMs = 50)
        assertEquals(false, plain.randomStart())
        assertTrue(lowRateSequences(plain, 200).count { it == 0L } >= 180)
        val spread = Snowflake(twitter, nodeId = 1, policy = Policy.WAIT, maxWaitMs = 50, randomStart = true)
        assertEquals(true, spread.randomStart())
        val seqs = lowRateSequences(spread, 200)
        assertTrue(seqs.count { it == 0L } < 20, "$seqs")
        assertTrue(seqs.all { it < 2048 + 16 }, "starts lie below half of the 4096 a tick holds")
        assertTrue(seqs.count { it < 1024 } in 50..150, "$seqs")
        val ids = spread.nextManyArray(10_000)
        for (i in 1 until ids.size) assertTrue(ids[i] > ids[i - 1])
    },
)
