// The same API from Java (ci/steps/jvm.sh compiles it against the Kotlin classes and runs it): Kotlin's
// default arguments are not visible to Java, so every argument is passed.
import dev.idforge.Flake128;
import dev.idforge.Flake128Generator;
import dev.idforge.Idforge;
import dev.idforge.IdField;
import dev.idforge.IdKind;
import dev.idforge.IdText;
import dev.idforge.IdforgeException;
import dev.idforge.Layout;
import dev.idforge.ObjectId;
import dev.idforge.Policy;
import dev.idforge.Segments;
import dev.idforge.Snowflake;
import dev.idforge.SnowflakeParts;
import dev.idforge.TextForm;
import dev.idforge.Ulid;
import dev.idforge.Ulids;
import dev.idforge.Uuid7;
import dev.idforge.Uuid7s;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

public final class JavaCaller {
    private static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    public static void main(String[] args) throws Exception {
        try (Snowflake g = new Snowflake(Layout.Companion.preset("twitter"), 5L, Policy.BORROW, 1000L, null, false)) {
            long a = g.next();
            long b = g.next();
            check(b > a, "ids increase");
            SnowflakeParts p = g.decode(b);
            check(p.getNode() == 5L, "node of the id");
            List<Long> many = g.nextMany(1000);
            Set<Long> seen = new HashSet<>(many);
            check(seen.size() == 1000 && many.get(0) > b, "a batch of fresh ids");
        }

        try (Snowflake g = new Snowflake(Layout.Companion.preset("twitter"), 6L, Policy.BORROW, 1000L, null, true)) {
            check(g.randomStart() && g.next() > 0, "a snowflake with a random sequence start");
        }

        try (Uuid7s g = new Uuid7s(null, null, null)) {
            UUID a = g.next();
            check(a.version() == 7 && a.variant() == 2, "java.util.UUID sees version 7, variant 2");
            check(Uuid7.parse(a.toString()).equals(a) && UUID.fromString(a.toString()).equals(a), "text round trip");
            check(Math.abs(Uuid7.timeMs(a) - System.currentTimeMillis()) < 60000, "time of the UUID");
            // UUID.compareTo compares signed halves; for UUIDv7s it is still the order they were made in.
            List<UUID> made = new ArrayList<>(g.nextMany(10000));
            made.add(0, a);
            List<UUID> sorted = new ArrayList<>(made);
            Collections.shuffle(sorted);
            Collections.sort(sorted);
            check(sorted.equals(made), "Collections.sort (UUID.compareTo) gives the generation order");
            sorted.sort(Uuid7.UNSIGNED_ORDER);
            check(sorted.equals(made), "the unsigned order too");
            check(Ulid.toUUID(Uuid7.toUlid(a)).equals(a), "the same bits as ULID text");
        }

        try (Ulids g = new Ulids(null, null, null)) {
            String a = g.next();
            String b = g.next();
            check(a.length() == 26 && a.compareTo(b) < 0, "ULID text, increasing");
            check(Ulid.parse(a.toLowerCase()).equals(a), "ULID parse");
        }

        // Any id's fields, as Java calls them (overloads without the kind, form and layout).
        java.util.List<IdField> fields = IdText.describe("ffffffff0000000000000000");
        check(fields.get(0).getText().equals("objectid"), "describe detects an ObjectId");
        check(fields.get(3).getNumber() == 4294967295L, "describe gives numbers as Longs");
        check(IdText.describe("123", IdKind.FLAKE128).get(0).getText().equals("flake128"), "describe by kind");

        // Text forms of a snowflake, as Java calls them (overloads without the form: base32).
        String shortText = IdText.toText(7301234567890123456L);
        check(shortText.equals("6AMSJ4ZME9EP0"), "base32 text of an id");
        check(IdText.fromText(shortText.toLowerCase()) == 7301234567890123456L, "base32 read back, either case");
        check(IdText.toText(-1L, TextForm.DECIMAL).equals("18446744073709551615"), "a Long as its 64 bits");
        check(IdText.fromText("8hLjMy0Qexc", TextForm.BASE62) == 7301234567890123456L, "base62 read back");
        try {
            IdText.fromText("6AMSJ4ZME9EPO");
            throw new AssertionError("an O in base32 must be refused");
        } catch (IdforgeException.InvalidBase32 e) {
            check(Idforge.getCode(e).equals("INVALID_BASE32"), "code of the base32 error");
        }

        try {
            Uuid7.parse(UUID.randomUUID().toString());
            throw new AssertionError("a version 4 UUID must be refused");
        } catch (IdforgeException.InvalidUuid e) {
            check(Idforge.getCode(e).equals("INVALID_UUID"), "code of the error");
        }

        try {
            new Snowflake(Layout.Companion.preset("twitter"), 1024L, null, 1000L, null, false);
            throw new AssertionError("node 1024 must be refused");
        } catch (IdforgeException.NodeOutOfRange e) {
            check(Idforge.getCode(e).equals("NODE_OUT_OF_RANGE"), "code of the error");
            check(Idforge.getStatus(e) == 2, "status of the error");
        }

        ObjectId oid = new ObjectId();
        check(ObjectId.Companion.fromHex(oid.toHex()).equals(oid), "ObjectId hex round trip");
        check(oid.toString().length() == 24, "ObjectId text");

        Flake128 f = new Flake128Generator(9L).next();
        UUID u = Idforge.toUUID(f);
        check(Idforge.flake128Of(u).equals(f), "flake-128 UUID round trip");
        check(f.decompose().getWorker() == 9L, "flake-128 worker");

        try (Segments s = new Segments("memory:", "java", 100L, 1000000L, true, 900000L, 10, 3000L)) {
            check(s.next() == 1L && s.next() == 2L, "segment ids");
        }
        System.out.println("JavaCaller: ok");
    }
}
