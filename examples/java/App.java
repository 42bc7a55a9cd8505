// A complete Java program on idforge. It needs only the release jar, JNA and the Kotlin stdlib
// (docs/jvm.md; ci/steps/jvm.sh compiles and runs it):
//   javac -cp idforge-jvm-VERSION.jar:kotlin-stdlib.jar App.java
//   java -cp idforge-jvm-VERSION.jar:jna.jar:kotlin-stdlib.jar:. App [SEGMENT-SOURCE-URL]
import dev.idforge.Flake128;
import dev.idforge.Flake128Generator;
import dev.idforge.Idforge;
import dev.idforge.IdforgeException;
import dev.idforge.ObjectId;
import dev.idforge.Segments;
import dev.idforge.Snowflake;

public final class App {
    public static void main(String[] args) throws Exception {
        // Kotlin's default arguments are not visible from Java: named constructors are on
        // Companion, and every argument is passed.
        try (Snowflake ids = Snowflake.Companion.preset("twitter", 7L)) {
            long orderNo = ids.next();
            System.out.println("snowflake " + orderNo + " made at " + ids.decode(orderNo).getTime());
        }

        ObjectId oid = new ObjectId();
        System.out.println("ObjectId " + oid.toHex() + " made at " + oid.generationTime());

        try (Flake128Generator flakes = new Flake128Generator((Long) null)) { // a random worker
            Flake128 f = flakes.next();
            System.out.println("flake-128 " + f.toBase62() + " = UUID " + Idforge.toUUID(f));
        }

        try {
            ObjectId.Companion.fromHex("nope");
        } catch (IdforgeException.InvalidHex e) {
            System.out.println("error " + Idforge.getCode(e)); // INVALID_HEX
        }

        // The segment server and its user `app` (README "The segment server", first steps).
        String url = args.length > 0 ? args[0] : "idforge://app:pw@127.0.0.1:7379";
        try (Segments seq = new Segments(url, "orders", 1000L, 1000000L, true, 900000L, 10, 3000L)) {
            System.out.println("order " + seq.next());
        }
    }
}
