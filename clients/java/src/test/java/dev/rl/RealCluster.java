package dev.rl;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Three cluster-enabled primaries on loopback joined with {@code redis-cli --cluster
 * create}, each with the module or, for the function edition, the library loaded
 * into every node (as tests/it/harness/cluster.rs builds one).
 */
public final class RealCluster implements AutoCloseable {

    public final List<RealServer> nodes = new ArrayList<>();

    public static RealCluster start(RealServer.Flavor flavor, RealServer.Edition edition) {
        RealCluster cluster = new RealCluster();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(RealServer.start(flavor, edition, List.of("--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf", "--cluster-port",
                        Integer.toString(RealServer.freePort()), "--cluster-node-timeout", "5000"), false));
            }
            List<String> cmd = new ArrayList<>(List.of(cli(), "--cluster", "create"));
            cluster.nodes.forEach(n -> cmd.add("127.0.0.1:" + n.port));
            cmd.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed:\n" + out);
            }
            cluster.waitOk();
            return cluster;
        } catch (IOException e) {
            cluster.close();
            throw new IllegalStateException("redis-cli (make deps installs redis-tools): " + e, e);
        } catch (InterruptedException e) {
            cluster.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private static String cli() {
        return RealServer.requiredFile("rl.rediscli", "redis-cli on PATH (make deps installs redis-tools)").toString();
    }

    private void waitOk() throws InterruptedException {
        long end = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < end) {
            boolean ok = nodes.stream().allMatch(n -> n.with(c -> c.sync().clusterInfo()).contains("cluster_state:ok"));
            if (ok) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the cluster did not reach cluster_state:ok in 30 s");
    }

    /** {@code host:port,...} as spring.data.redis.cluster.nodes takes it. */
    public String nodeList() {
        return String.join(",", nodes.stream().map(n -> "127.0.0.1:" + n.port).toList());
    }

    /** The node that holds {@code key}, found by asking each whether it exists there. */
    public long nodesHolding(String key) {
        return nodes.stream().filter(n -> {
            try {
                return n.with(c -> c.sync().exists(key)) == 1;
            } catch (RuntimeException moved) {
                return false;
            }
        }).count();
    }

    @Override
    public void close() {
        nodes.forEach(RealServer::close);
    }
}
