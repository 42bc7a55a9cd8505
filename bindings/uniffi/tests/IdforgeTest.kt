// The JVM binding's tests (ci/steps/jvm.sh compiles and runs this): the shared vectors and error table
// of core/testdata, generators from threads, segments. A plain main with a small runner: the
// Kotlin compiler's distribution has kotlin-test but no JUnit.
import com.google.gson.JsonElement
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.idforge.*
import java.io.File
import java.time.Instant
import java.util.UUID
import java.util.concurrent.atomic.AtomicInteger
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNotEquals
import kotlin.test.assertTrue
import kotlin.test.fail

val TESTDATA = File(System.getProperty("idforge.testdata") ?: "core/testdata")

fun load(name: String): JsonObject = JsonParser.parseReader(File(TESTDATA, name).reader()).asJsonObject

fun JsonObject.rows(key: String): List<JsonObject> = getAsJsonArray(key).map { it.asJsonObject }

/** A u64 from a JSON number or decimal string, as the same 64 bits in a Long. */
fun JsonElement.u64(): Long = asString.toULong().toLong()

fun JsonObject.u64(key: String): Long = get(key).u64()

fun JsonObject.str(key: String): String = get(key).asString

fun hex(bytes: ByteArray): String = bytes.joinToString("") { "%02x".format(it) }

fun unhex(s: String): ByteArray = ByteArray(s.length / 2) { s.substring(2 * it, 2 * it + 2).toInt(16).toByte() }

fun layoutOf(spec: JsonElement): Layout {
    if (spec.isJsonPrimitive) return Layout.preset(spec.asString)
    val o = spec.asJsonObject
    val order = when (o.str("order")) {
        "time_node_seq" -> Order.TIME_NODE_SEQ
        "time_seq_node" -> Order.TIME_SEQ_NODE
        else -> fail("order ${o.str("order")}")
    }
    return Layout(
        o.u64("epoch_ms"), o.u64("tick_ms"), o.get("time_bits").asInt, o.get("node_bits").asInt,
        o.get("seq_bits").asInt, order, o.get("unsigned").asBoolean,
    )
}

/** Runs `block`, which must throw the IdforgeException of `code`. */
fun throwsCode(code: String, block: () -> Unit) {
    val e = assertFailsWith<IdforgeException> { block() }
    assertEquals(code, e.code, e.message)
}

val SNOW = load("snowflake.json")
val OID = load("objectid.json")
val FLAKE = load("flake128.json")
val ERRORS = load("errors.json")

fun camel(name: String) = name.split('_').joinToString("") { it.lowercase().replaceFirstChar(Char::uppercase) }

val tests = linkedMapOf<String, () -> Unit>(
    "error table equals errors.json" to {
        val rows = ERRORS.rows("errors")
        assertEquals(rows.map { it.get("code").asInt to it.str("name") }, errorCodes().map { it.status to it.name })
        for (row in rows) {
            // Every row has its subclass, and the helpers give its code and status.
            val cls = Class.forName("dev.idforge.IdforgeException\$${camel(row.str("name"))}")
            val e = cls.getConstructor(String::class.java).newInstance("the message") as IdforgeException
            assertEquals(row.str("name"), e.code)
            assertEquals(row.get("code").asInt, e.status)
            assertEquals("the message", e.message)
        }
    },
    "native errors raise their class" to {
        val cases = listOf<Triple<() -> Any, String, String>>(
            Triple({ ObjectId.fromHex("zz") }, "INVALID_HEX", "hex"),
            Triple({ Flake128.fromBase62("!") }, "INVALID_BASE62", "base62"),
            Triple({ ObjectId.fromBytes(ByteArray(5)) }, "INVALID_LENGTH", "length"),
            Triple({ Snowflake.preset("twitter", 1024) }, "NODE_OUT_OF_RANGE", "node"),
            Triple({ Layout.preset("nope") }, "INVALID_LAYOUT", "preset"),
            Triple({ Layout(0, 0, 41, 10, 12, Order.TIME_NODE_SEQ) }, "INVALID_LAYOUT", "tick"),
            Triple({ Layout(0, 1, -1, 10, 12, Order.TIME_NODE_SEQ) }, "INVALID_LAYOUT", "negative"),
            Triple({ Snowflake(Layout.preset("twitter"), maxWaitMs = -1) }, "INVALID_ARGUMENT", "negative"),
            Triple({ Segments("bogus://x", "t") }, "INVALID_URL", ""),
            Triple({ Segments("memory:", "../x") }, "INVALID_ARGUMENT", ""),
            Triple({ Segments("memory:", "t", prefetchPct = 300) }, "INVALID_ARGUMENT", "prefetch"),
            Triple({ Snowflake.preset("twitter").nextMany(-1) }, "INVALID_ARGUMENT", "2^27"),
            Triple({ Layout.preset("twitter").boundsAt(0) }, "TIME_OUT_OF_RANGE", ""),
            Triple({ Layout.preset("twitter").compose(0, 0, 4096) }, "SEQUENCE_OUT_OF_RANGE", ""),
            Triple({ Flake128.compose(0, 0, 65536) }, "SEQUENCE_OUT_OF_RANGE", ""),
            Triple({ Flake128.fromDecimal("+1") }, "INVALID_DECIMAL", "decimal"),
        )
        for ((call, code, words) in cases) {
            val e = assertFailsWith<IdforgeException> { call() }
            assertEquals(code, e.code, e.message)
            assertTrue(e.message!!.lowercase().contains(words), "${e.message} should say $words")
        }
        // A Kotlin user catches the subclass itself.
        assertFailsWith<IdforgeException.InvalidHex> { ObjectId.fromHex("not hex") }
    },
    "layout presets" to {
        assertEquals(SNOW.rows("presets").map { it.str("name") }, layoutPresetNames())
        for (p in SNOW.rows("presets")) {
            val got = Layout.preset(p.str("name"))
            assertEquals(layoutOf(p), got)
            assertEquals(layoutOf(p).hashCode(), got.hashCode())
            assertEquals(p.u64("epoch_ms"), got.epochMs())
            assertEquals(p.u64("tick_ms"), got.tickMs())
            assertEquals(
                listOf(p.get("time_bits").asInt, p.get("node_bits").asInt, p.get("seq_bits").asInt),
                listOf(got.timeBits(), got.nodeBits(), got.seqBits()),
            )
            assertEquals(p.get("unsigned").asBoolean, got.unsigned())
        }
        for (row in SNOW.rows("preset_names")) {
            if (row.get("preset").isJsonNull) throwsCode("INVALID_LAYOUT") { Layout.preset(row.str("input")) }
            else assertEquals(Layout.preset(row.str("preset")), Layout.preset(row.str("input")))
        }
        for (spec in SNOW.getAsJsonArray("valid_layouts")) layoutOf(spec)
        for (row in SNOW.rows("invalid_layouts")) throwsCode(row.str("error")) { layoutOf(row.get("layout")) }
    },
    "compose and decompose" to {
        for (r in SNOW.rows("compose")) {
            val l = layoutOf(r.get("layout"))
            assertEquals(r.u64("id"), l.compose(r.u64("tick"), r.u64("node"), r.u64("seq")))
            val p = l.decompose(r.u64("id"))
            assertEquals(listOf(r.u64("tick"), r.u64("time_ms"), r.u64("node"), r.u64("seq")), listOf(p.tick, p.timeMs, p.node, p.seq))
            if (p.timeMs >= 0) assertEquals(Instant.ofEpochMilli(p.timeMs), p.time)
        }
        for (r in SNOW.rows("invalid_compose")) {
            throwsCode(r.str("error")) { layoutOf(r.get("layout")).compose(r.u64("tick"), r.u64("node"), r.u64("seq")) }
        }
        for (r in SNOW.rows("invalid_decompose")) throwsCode(r.str("error")) { layoutOf(r.get("layout")).decompose(r.u64("id")) }
    },
    "bounds and epoch checks" to {
        for (r in SNOW.rows("bounds_at")) {
            val b = layoutOf(r.get("layout")).boundsAt(r.u64("time_ms"))
            assertEquals(listOf(r.u64("min"), r.u64("max")), listOf(b.min, b.max))
        }
        for (r in SNOW.rows("invalid_bounds_at")) throwsCode(r.str("error")) { layoutOf(r.get("layout")).boundsAt(r.u64("time_ms")) }
        for (r in SNOW.rows("check_epoch")) {
            val l = layoutOf(r.get("layout"))
            if (r.get("error").isJsonNull) l.checkEpoch(r.u64("now_ms"))
            else throwsCode(r.str("error")) { l.checkEpoch(r.u64("now_ms")) }
        }
        for (r in SNOW.rows("invalid_generator_new")) {
            throwsCode(r.str("error")) { Snowflake(layoutOf(r.get("layout")), nodeId = r.u64("node")) }
        }
    },
    "layout text vectors" to {
        val text = load("layout_text.json")
        for (r in text.rows("valid")) {
            val got = Layout.parse(r.str("text"))
            assertEquals(layoutOf(r), got, r.str("text"))
            assertEquals(got, Layout.parse(got.spec()))
            assertEquals(r.str("display"), got.presetName() ?: got.spec())
        }
        for (r in text.rows("invalid")) {
            val e = assertFailsWith<IdforgeException> { Layout.parse(r.str("text")) }
            assertEquals("INVALID_LAYOUT", e.code, r.str("text"))
            assertTrue(e.message!!.endsWith(r.str("message")), "${r.str("text")}: ${e.message}")
        }
    },
    "id text vectors (IdText, a Long as its 64 bits)" to {
        val v = load("id_text.json")
        val forms = mapOf("decimal" to TextForm.DECIMAL, "base32" to TextForm.BASE32, "base62" to TextForm.BASE62)
        for (r in v.rows("ids")) {
            val id = r.u64("id")
            for ((name, form) in forms) {
                assertEquals(r.str(name), IdText.toText(id, form), "$name of ${r.str("id")}")
                assertEquals(id, IdText.fromText(r.str(name), form), "$name ${r.str(name)}")
            }
            assertEquals(r.str("base32"), IdText.toText(id))
            assertEquals(java.lang.Long.toUnsignedString(id), IdText.toText(id, TextForm.DECIMAL))
        }
        for (r in v.rows("parse")) assertEquals(r.u64("id"), IdText.fromText(r.str("text"), forms.getValue(r.str("form"))))
        for (r in v.rows("errors")) {
            throwsCode(r.str("error")) { IdText.fromText(r.str("text"), forms.getValue(r.str("form"))) }
        }
        // Reading an id of any kind takes a snowflake's one text too ("007" is not 7).
        for (r in v.rows("describe_errors")) {
            val kind = if (r.str("kind") == "any") null else IdKind.SNOWFLAKE
            throwsCode(r.str("error")) { IdText.describe(r.str("text"), kind) }
        }
        // Base32 texts of a generator's ids sort like the ids.
        val g = Snowflake(layout = Layout.preset("twitter"), nodeId = 3)
        val ids = List(1000) { g.next() }
        assertEquals(ids.map { IdText.toText(it) }, ids.map { IdText.toText(it) }.sorted())
    },
    "any id's fields (IdText.describe)" to {
        val f = IdText.describe("ffffffff0000000000000000")
        assertEquals(listOf("type", "id", "time", "timestamp"), f.map { it.key })
        assertEquals("2106-02-07T06:28:15Z", f[2].text)
        assertEquals(4294967295L, f[3].number)
        val s = IdText.describe("6AMSJ4ZME9EP0", form = TextForm.BASE32, layout = Layout.preset("discord"))
        assertEquals("discord", s.first { it.key == "layout" }.text)
        assertEquals("7301234567890123456", s.first { it.key == "id" }.text)
        assertEquals("flake128", IdText.describe("123", IdKind.FLAKE128)[0].text)
        throwsCode("INVALID_ARGUMENT") { IdText.describe("nope") }
        throwsCode("INVALID_DECIMAL") { IdText.describe("12a", IdKind.SNOWFLAKE) }
        throwsCode("INVALID_DECIMAL") { IdText.describe("1".repeat(1_000_000)) }
    },
    "ObjectId vectors" to {
        for (r in OID.rows("timestamps") + OID.rows("legacy")) {
            val oid = ObjectId.fromHex(r.str("hex"))
            assertEquals(r.get("seconds").asLong, oid.timestamp())
            assertEquals(r.str("rfc3339"), oid.generationTime().toString())
        }
        for (r in OID.rows("parse")) {
            assertEquals(r.str("hex"), ObjectId.fromHex(r.str("input")).toHex())
            assertEquals(r.str("hex"), ObjectId.fromHex(r.str("input")).toString())
        }
        for (r in OID.rows("from_parts")) {
            assertEquals(r.str("hex"), hex(ObjectId.fromHex(r.str("hex")).toBytes()))
            assertEquals(r.str("hex"), ObjectId.fromBytes(unhex(r.str("hex"))).toHex())
        }
        for (r in OID.rows("invalid_hex")) throwsCode(r.str("error")) { ObjectId.fromHex(r.str("input")) }
        for (r in OID.rows("invalid_bytes")) throwsCode(r.str("error")) { ObjectId.fromBytes(unhex(r.str("bytes_hex"))) }
    },
    "Flake128 vectors" to {
        for (r in FLAKE.rows("parts")) {
            val f = Flake128.compose(r.u64("time_ms"), r.u64("worker"), r.get("seq").asInt)
            assertEquals(r.str("u128"), f.toDecimal())
            assertEquals(r.str("u128").toBigInteger(), f.toBigInteger())
            assertEquals(listOf(r.str("hex"), r.str("base62"), r.str("bytes_hex")), listOf(f.toHex(), f.toBase62(), hex(f.toBytes())))
            assertEquals(f, Flake128.fromBase62(r.str("base62")))
            assertEquals(f, Flake128.fromHex(r.str("hex")))
            assertEquals(f, Flake128.fromDecimal(r.str("u128")))
            assertEquals(f, Flake128.fromBytes(unhex(r.str("bytes_hex"))))
            assertEquals(f, flake128Of(f.toUUID()))
            assertEquals(r.str("hex"), f.toUUID().toString().replace("-", ""))
            val p = f.decompose()
            assertEquals(listOf(r.u64("time_ms"), r.u64("worker"), r.get("seq").asLong), listOf(p.timeMs, p.worker, p.seq.toLong()))
        }
        for (r in FLAKE.rows("boundary_base62")) {
            val f = Flake128.fromBase62(r.str("input"))
            val p = f.decompose()
            assertEquals(listOf(r.u64("time_ms"), r.u64("worker"), r.get("seq").asLong), listOf(p.timeMs, p.worker, p.seq.toLong()))
            assertEquals(r.str("base62"), f.toBase62())
            assertEquals(r.str("u128"), f.toDecimal())
        }
        for (r in FLAKE.rows("invalid_base62")) throwsCode(r.str("error")) { Flake128.fromBase62(r.str("input")) }
        for (r in FLAKE.rows("invalid_hex")) throwsCode(r.str("error")) { Flake128.fromHex(r.str("input")) }
        for (r in FLAKE.rows("invalid_bytes")) throwsCode(r.str("error")) { Flake128.fromBytes(unhex(r.str("bytes_hex"))) }
        for (r in FLAKE.rows("invalid_parts")) {
            throwsCode(r.str("error")) { Flake128.compose(r.u64("time_ms"), r.u64("worker"), r.get("seq").asInt) }
        }
    },
    "2 threads draw 1,000,000 snowflakes, no duplicates" to {
        val g = Snowflake.preset("twitter", nodeId = 7)
        val perThread = 500_000
        val results = Array(2) { LongArray(perThread) }
        val threads = (0 until 2).map { t ->
            Thread {
                var prev = Long.MIN_VALUE
                for (i in 0 until perThread) {
                    val id = g.next()
                    check(id > prev) { "ids of one thread must increase" }
                    prev = id
                    results[t][i] = id
                }
            }
        }
        threads.forEach { it.start() }
        threads.forEach { it.join() }
        val all = (results[0] + results[1]).sortedArray()
        for (i in 1 until all.size) assertNotEquals(all[i - 1], all[i], "duplicate id ${all[i]}")
        assertEquals(1_000_000, all.size)
        // Every id decodes to this generator's node and a time near now.
        val p = g.decode(all.last())
        assertEquals(7L, p.node)
        assertTrue(Math.abs(p.timeMs - System.currentTimeMillis()) < 60_000)
    },
    "snowflake batch, compose, bounds" to {
        val g = Snowflake(Layout.preset("twitter"), nodeId = 3, policy = Policy.WAIT)
        val ids = g.nextManyArray(10_000)
        for (i in 1 until ids.size) assertTrue(ids[i] > ids[i - 1])
        val now = System.currentTimeMillis()
        val b = g.boundsAt(now)
        assertTrue(b.min <= g.compose(now, 0) && g.compose(now, 0) <= b.max)
        assertEquals(3L, g.decode(g.compose(now, 5)).node)
        assertEquals(5L, g.decode(g.compose(now, 5)).seq)
        assertEquals(Layout.preset("twitter"), g.layout())
        assertEquals(3L, g.nodeId())
        assertEquals(0, g.nextMany(0).size)
    },
    "ObjectId generation, equality, ordering" to {
        val ids = List(100_000) { ObjectId() }
        assertEquals(ids.size, ids.map { it.toHex() }.toSet().size)
        assertEquals(ids.size, ids.toHashSet().size)
        val a = ObjectId.fromHex(ids[0].toHex())
        assertEquals(ids[0], a)
        assertEquals(ids[0].hashCode(), a.hashCode())
        assertTrue(ids[0] < ids[1])
        assertEquals(ids.map { it.toHex() }.sorted(), ids.sorted().map { it.toHex() })
        val age = Math.abs(ids[0].generationTime().epochSecond - Instant.now().epochSecond)
        assertTrue(age < 60, "generation time $age s from now")
    },
    "Flake128 generator" to {
        val g = Flake128Generator(worker = 42)
        assertEquals(42L, g.worker())
        val ids = List(10_000) { g.next() }
        for (i in 1 until ids.size) assertTrue(ids[i] > ids[i - 1])
        assertEquals(42L, ids[0].decompose().worker)
        val random = Flake128Generator()
        assertTrue(random.worker() in 0L..0xFFFF_FFFF_FFFFL)
        throwsCode("NODE_OUT_OF_RANGE") { Flake128Generator(worker = 1L shl 48) }
        val u = UUID.randomUUID()
        assertEquals(u, flake128Of(u).toUUID())
    },
    "segments" to {
        val dir = kotlin.io.path.createTempDirectory("idforge-jvm").toFile()
        try {
            val url = "sqlite://${dir.absolutePath}/seg.db"
            val a = Segments(url, "orders", step = 100)
            val b = Segments(url, "orders", step = 100)
            val got = mutableListOf<Long>()
            repeat(1000) { got += a.next(); got += b.next() }
            got += a.nextMany(500)
            assertEquals(got.size, got.toSet().size)
            assertEquals("orders", a.tag())
            assertTrue(a.stats().rangesFetched >= 1)
            // a and b share the source's refill engine (SQLite: one lane, batched).
            val engine = a.stats().engine
            assertTrue(engine.generators >= 2 && engine.threads == 1L, engine.toString())
            assertTrue(engine.refills >= engine.roundTrips, engine.toString())
            a.ready()
            val t = a.tryNext()
            assertTrue(t == null || t !in got)
        } finally {
            dir.deleteRecursively()
        }
        val m = Segments("memory:", "t", step = 10)
        assertEquals(1L, m.next())
        // The segment server of ci/services.sh (ci/test.sh sets IDFORGE_REQUIRE_SERVICES=1).
        val remote = System.getenv("IDFORGE_TEST_IDFORGE_URL")
        if (remote == null) {
            check(System.getenv("IDFORGE_REQUIRE_SERVICES") != "1") { "IDFORGE_TEST_IDFORGE_URL is not set" }
            println("     (no IDFORGE_TEST_IDFORGE_URL: the idforge:// case is skipped)")
        } else {
            val s1 = Segments(remote, "jvm-test", step = 100)
            val s2 = Segments(remote, "jvm-test", step = 100)
            val ids = s1.nextMany(5000) + s2.nextMany(5000)
            assertEquals(ids.size, ids.toSet().size)
        }
        // A source that is down: the typed error, within the timeout.
        throwsCode("SOURCE_UNAVAILABLE") { Segments("idforge://127.0.0.1:9", "t", timeoutMs = 500).next() }
    },
    "segment options: the shared vectors" to {
        val vectors = load("segment_options.json")
        fun open(given: JsonObject): Segments {
            fun long(key: String) = if (given.has(key)) given.get(key).asLong else null
            return Segments(
                "memory:", "t", step = long("step"), maxStep = long("max_step"),
                dynamicStep = if (given.has("dynamic_step")) given.get("dynamic_step").asBoolean else null,
                targetMs = long("target_ms"), prefetchPct = long("prefetch_pct")?.toInt(), timeoutMs = long("timeout_ms"),
            )
        }
        for (row in vectors.rows("valid")) {
            val want = row.getAsJsonObject("resolved")
            val expected = SegmentOptions(
                want.get("step").asLong, want.get("max_step").asLong, want.get("dynamic_step").asBoolean,
                want.get("target_ms").asLong, want.get("prefetch_pct").asInt, want.get("timeout_ms").asLong,
            )
            assertEquals(expected, open(row.getAsJsonObject("given")).options(), row.toString())
        }
        for (row in vectors.rows("invalid") + vectors.rows("invalid_negative")) {
            val e = assertFailsWith<IdforgeException> { open(row.getAsJsonObject("given")) }
            assertEquals(row.str("error"), e.code, row.toString())
            assertEquals("invalid argument: " + row.str("message"), e.message, row.toString())
        }
        // Null is "not given": the defaults.
        val d = vectors.getAsJsonObject("defaults")
        assertEquals(d.get("step").asLong, Segments("memory:", "t", step = null).options().step)
    },
    "leased snowflakes" to {
        val remote = System.getenv("IDFORGE_TEST_IDFORGE_URL")
        if (remote == null) {
            check(System.getenv("IDFORGE_REQUIRE_SERVICES") != "1") { "IDFORGE_TEST_IDFORGE_URL is not set" }
            println("     (no IDFORGE_TEST_IDFORGE_URL: skipped)")
        } else {
            val service = "jvm-lease-${System.nanoTime()}"
            val twitter = Layout.preset("twitter")
            Snowflake.leased(twitter, remote, service).use { a ->
                Snowflake.leased(twitter, remote, service, ttlMs = 2000).use { b ->
                    assertEquals(0L, a.nodeId())
                    assertEquals(1L, b.nodeId())
                    assertEquals(1L, b.decode(b.next()).node)
                }
            }
            throwsCode("INVALID_URL") { Snowflake.leased(twitter, "redis://127.0.0.1:1", "s") }
            throwsCode("INVALID_ARGUMENT") { Snowflake.leased(twitter, remote, "bad name") }
            throwsCode("INVALID_ARGUMENT") { Snowflake.leased(twitter, remote, "s", ttlMs = -1) }
        }
    },
)

fun main() {
    val failed = AtomicInteger()
    val all = tests + timeOrderedTests // TimeOrderedTest.kt
    for ((name, body) in all) {
        try {
            body()
            println("ok   $name")
        } catch (e: Throwable) {
            failed.incrementAndGet()
            println("FAIL $name: $e")
            e.printStackTrace()
        }
    }
    println("${all.size - failed.get()} passed, ${failed.get()} failed")
    if (failed.get() > 0) kotlin.system.exitProcess(1)
}
