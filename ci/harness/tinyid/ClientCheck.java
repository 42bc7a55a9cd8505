import com.xiaoju.uemc.tinyid.client.utils.TinyId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Takes ids through tinyid's own Java client (tinyid-client, unchanged) from the server named in
 * tinyid_client.properties: THREADS threads each take PER ids of bizType "orders" one at a time,
 * then a batch of 10. Prints every id, one a line.
 */
public class ClientCheck {
    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int per = Integer.parseInt(args[1]);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<Long>>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            futures.add(pool.submit(() -> {
                List<Long> ids = new ArrayList<>();
                for (int i = 0; i < per; i++) {
                    ids.add(TinyId.nextId("orders"));
                }
                ids.addAll(TinyId.nextId("orders", 10));
                return ids;
            }));
        }
        StringBuilder out = new StringBuilder();
        for (Future<List<Long>> f : futures) {
            for (Long id : f.get()) {
                out.append(id).append('\n');
            }
        }
        System.out.print(out);
        System.out.flush();
        // The client's refill threads are not daemons.
        System.exit(0);
    }
}
