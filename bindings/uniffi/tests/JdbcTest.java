// idforge's ids through JDBC, with the drivers Debian ships (PostgreSQL's, and xerial's SQLite):
// 10,000 rows from 8 threads keyed by a snowflake, with a UUIDv7, a ULID and an ObjectId beside
// it; read back unique and in each thread's creation order (also by the database's ORDER BY),
// through Gson with longs as decimal text (core/testdata/json_ids.json) and back, and the
// catalog's column types as docs/frameworks.md gives them. ci/steps/jvm.sh runs it:
//   java -cp idforge.jar:jna.jar:kotlin-stdlib.jar:postgresql.jar:sqlite-jdbc.jar:gson.jar:. JdbcTest
// with IDFORGE_TEST_POSTGRES_URL (ci/services.sh) for PostgreSQL.
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.LongSerializationPolicy;
import dev.idforge.ObjectId;
import dev.idforge.Snowflake;
import dev.idforge.Ulids;
import dev.idforge.Uuid7s;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

public final class JdbcTest {
    static final int WORKERS = 8, ROWS = 1250, BATCH = 250;

    /** One row as the test reads it back; in JSON its id is decimal text. */
    static final class Row {
        long id;
        String ref;
        String ulid;
        String oid;
        transient int worker;
        transient int seq;
    }

    record Db(String name, String url, Properties props, String ddl, Map<String, String> types) {}

    public static void main(String[] args) throws Exception {
        List<Db> dbs = new ArrayList<>();
        Path dir = Files.createTempDirectory("idforge-jdbc");
        Properties sqlite = new Properties();
        sqlite.setProperty("busy_timeout", "60000");
        sqlite.setProperty("journal_mode", "WAL"); // writers wait for each other, not for readers
        dbs.add(new Db("sqlite", "jdbc:sqlite:" + dir.resolve("ids.db"), sqlite,
                "CREATE TABLE orders (id BIGINT PRIMARY KEY, ref TEXT NOT NULL, ulid VARCHAR(26) NOT NULL, "
                        + "oid BLOB NOT NULL, worker INTEGER NOT NULL, seq INTEGER NOT NULL)",
                Map.of("id", "BIGINT", "ref", "TEXT", "ulid", "VARCHAR(26)", "oid", "BLOB")));
        String pg = System.getenv("IDFORGE_TEST_POSTGRES_URL");
        if (pg != null && !pg.isEmpty()) {
            URI u = URI.create(pg);
            Properties props = new Properties();
            props.setProperty("user", u.getUserInfo() == null ? "postgres" : u.getUserInfo().split(":")[0]);
            String schema = "jdbc_" + ProcessHandle.current().pid();
            props.setProperty("currentSchema", schema);
            String url = "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath();
            try (Connection c = DriverManager.getConnection(url, props); Statement s = c.createStatement()) {
                s.execute("CREATE SCHEMA " + schema);
            }
            dbs.add(new Db("postgres", url, props,
                    "CREATE TABLE orders (id BIGINT PRIMARY KEY, ref UUID NOT NULL, ulid VARCHAR(26) NOT NULL, "
                            + "oid BYTEA NOT NULL, worker INTEGER NOT NULL, seq INTEGER NOT NULL)",
                    Map.of("id", "bigint", "ref", "uuid", "ulid", "character varying(26)", "oid", "bytea")));
        } else if (System.getenv("IDFORGE_REQUIRE_SERVICES") != null) {
            throw new AssertionError("IDFORGE_TEST_POSTGRES_URL is not set but IDFORGE_REQUIRE_SERVICES is");
        }
        try {
            for (Db db : dbs) {
                run(db);
            }
        } finally {
            for (Db db : dbs) {
                if (db.name.equals("postgres")) {
                    try (Connection c = DriverManager.getConnection(db.url, db.props); Statement s = c.createStatement()) {
                        s.execute("DROP SCHEMA " + db.props.getProperty("currentSchema") + " CASCADE");
                    }
                }
            }
        }
        jsonVectors();
    }

    static void run(Db db) throws Exception {
        boolean pg = db.name.equals("postgres");
        try (Connection c = DriverManager.getConnection(db.url, db.props); Statement s = c.createStatement()) {
            s.execute(db.ddl);
        }
        try (Snowflake ids = Snowflake.Companion.preset("twitter", 11L);
                Uuid7s uuids = new Uuid7s(null, null, null);
                Ulids ulids = new Ulids(null, null, null)) {
            ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                final int worker = w;
                done.add(pool.submit(() -> {
                    try (Connection c = DriverManager.getConnection(db.url, db.props);
                            PreparedStatement insert = c.prepareStatement(
                                    "INSERT INTO orders (id, ref, ulid, oid, worker, seq) VALUES (?, ?, ?, ?, ?, ?)")) {
                        c.setAutoCommit(false);
                        for (int n = 0; n < ROWS; n++) {
                            insert.setLong(1, ids.next());
                            UUID ref = uuids.next();
                            if (pg) {
                                insert.setObject(2, ref);
                            } else {
                                insert.setString(2, ref.toString());
                            }
                            insert.setString(3, ulids.next());
                            try (ObjectId oid = new ObjectId()) {
                                insert.setBytes(4, oid.toBytes());
                            }
                            insert.setInt(5, worker);
                            insert.setInt(6, n);
                            insert.addBatch();
                            if ((n + 1) % BATCH == 0) {
                                insert.executeBatch();
                                c.commit();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            pool.shutdown();
        }
        try (Connection c = DriverManager.getConnection(db.url, db.props)) {
            List<Row> rows = read(c, "");
            check(rows.size() == WORKERS * ROWS, db.name + ": " + rows.size() + " rows");
            try (ObjectId oid = ObjectId.Companion.fromHex(rows.get(0).oid)) {
                check(oid.toHex().equals(rows.get(0).oid), "ObjectId bytes read back");
            }
            Map<String, Function<Row, String>> keys = new TreeMap<>();
            keys.put("id", r -> String.format("%020d", r.id));
            keys.put("ref", r -> r.ref);
            keys.put("ulid", r -> r.ulid);
            keys.put("oid", r -> r.oid);
            for (Map.Entry<String, Function<Row, String>> k : keys.entrySet()) {
                Function<Row, String> key = k.getValue();
                HashSet<String> seen = new HashSet<>();
                rows.forEach(r -> seen.add(key.apply(r)));
                check(seen.size() == rows.size(), db.name + " " + k.getKey() + ": duplicates");
                for (int w = 0; w < WORKERS; w++) {
                    final int worker = w;
                    List<Row> mine = rows.stream().filter(r -> r.worker == worker)
                            .sorted(Comparator.comparingInt(r -> r.seq)).toList();
                    for (int i = 1; i < mine.size(); i++) {
                        check(key.apply(mine.get(i - 1)).compareTo(key.apply(mine.get(i))) < 0,
                                db.name + " " + k.getKey() + ": worker " + w + " out of creation order");
                    }
                }
                List<Row> ordered = read(c, " ORDER BY " + k.getKey());
                for (int i = 1; i < ordered.size(); i++) {
                    check(key.apply(ordered.get(i - 1)).compareTo(key.apply(ordered.get(i))) < 0,
                            db.name + " " + k.getKey() + ": ORDER BY differs at row " + i);
                }
            }
            Gson gson = new GsonBuilder().setLongSerializationPolicy(LongSerializationPolicy.STRING).create();
            for (Row r : rows) {
                String text = gson.toJson(r);
                check(text.startsWith("{\"id\":\"" + r.id + "\""), "JSON " + text);
                Row back = gson.fromJson(text, Row.class);
                check(back.id == r.id && back.ref.equals(r.ref) && back.ulid.equals(r.ulid) && back.oid.equals(r.oid),
                        "JSON round trip of " + text);
            }
            Map<String, String> types = columnTypes(c, pg);
            check(types.equals(new TreeMap<>(db.types)), db.name + ": column types " + types + ", want " + db.types);
            System.out.println("jdbc " + db.name + ": " + rows.size() + " rows from " + WORKERS
                    + " threads, unique, in creation order, JSON round trips; columns " + types);
        }
    }

    static List<Row> read(Connection c, String order) throws Exception {
        List<Row> out = new ArrayList<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT id, ref, ulid, oid, worker, seq FROM orders" + order)) {
            while (rs.next()) {
                Row r = new Row();
                r.id = rs.getLong(1);
                r.ref = rs.getString(2);
                r.ulid = rs.getString(3);
                r.oid = HexFormat.of().formatHex(rs.getBytes(4)); // ObjectId's hex (checked below)
                r.worker = rs.getInt(5);
                r.seq = rs.getInt(6);
                out.add(r);
            }
        }
        return out;
    }

    static Map<String, String> columnTypes(Connection c, boolean pg) throws Exception {
        String query = pg
                ? "SELECT column_name, CASE WHEN character_maximum_length IS NULL THEN data_type "
                        + "ELSE data_type || '(' || character_maximum_length || ')' END FROM information_schema.columns "
                        + "WHERE table_name = 'orders' AND table_schema = current_schema()"
                : "SELECT name, type FROM pragma_table_info('orders')";
        Map<String, String> out = new TreeMap<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
            while (rs.next()) {
                if (!rs.getString(1).equals("worker") && !rs.getString(1).equals("seq")) {
                    out.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return out;
    }

    /** The shared JSON of a snowflake id, for the ids a Java long holds (below 2^63). */
    static void jsonVectors() throws Exception {
        String dir = System.getProperty("idforge.testdata", "core/testdata");
        JsonObject doc = JsonParser.parseString(Files.readString(Path.of(dir, "json_ids.json"))).getAsJsonObject();
        Gson gson = new GsonBuilder().setLongSerializationPolicy(LongSerializationPolicy.STRING).create();
        int n = 0;
        for (var e : doc.getAsJsonArray("cases")) {
            String id = e.getAsJsonObject().get("id").getAsString();
            if (id.length() > 19 || (id.length() == 19 && id.compareTo("9223372036854775807") > 0)) {
                continue; // past a Java long
            }
            Map<String, Long> m = Map.of("id", Long.parseLong(id));
            check(gson.toJson(m).equals(e.getAsJsonObject().get("json").getAsString()), "json_ids: " + id);
            n++;
        }
        System.out.println("jdbc: json_ids.json, " + n + " ids written as every binding writes them");
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
