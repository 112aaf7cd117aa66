package dev.locks.torture;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The small path tree the workers fight over: {@code /p/{a,b,c}/{0,1,2}/{x,y}} in two tenants, so
 * that random requests collide often, at every depth, and across parents and children. Every leaf
 * has a shared record; a holder of a path may write the records of the leaves under it.
 */
final class TortureTree {

    static final List<String> TENANTS = List.of("t1", "t2");

    static final List<String> SINGLETONS = List.of("job-a", "job-b");

    static final List<String> SEMAPHORES = List.of("exports", "reports");

    /** Permits of each semaphore, by the index in {@link #SEMAPHORES}. */
    static final int[] SEMAPHORE_MAX = { 2, 3 };

    /**
     * A smaller max that a third of the requests for each semaphore ask for instead, as nodes do during
     * a rolling change of it; by the index in {@link #SEMAPHORES}.
     */
    static final int[] SEMAPHORE_SMALLER_MAX = { 1, 2 };

    /** The lock the pause fault fights over, outside the tree so that no random request touches it. */
    static final String PAUSE_PATH = "/fault/pause";

    static final String PAUSE_TENANT = "t1";

    private static final String[] LEVEL1 = { "a", "b", "c" };

    private static final String[] LEVEL2 = { "0", "1", "2" };

    private static final String[] LEVEL3 = { "x", "y" };

    private TortureTree() {
    }

    static List<String> leaves() {
        List<String> leaves = new ArrayList<>();
        for (String a : LEVEL1) {
            for (String b : LEVEL2) {
                for (String c : LEVEL3) {
                    leaves.add("/p/" + a + "/" + b + "/" + c);
                }
            }
        }
        return leaves;
    }

    /** Every record id the run uses: leaves per tenant, singletons, and the pause fault's record. */
    static List<String> recordIds() {
        List<String> ids = new ArrayList<>();
        for (String tenant : TENANTS) {
            for (String leaf : leaves()) {
                ids.add(pathRecord(tenant, leaf));
            }
        }
        for (String name : SINGLETONS) {
            ids.add(singletonRecord(name));
        }
        ids.add(pathRecord(PAUSE_TENANT, PAUSE_PATH));
        return ids;
    }

    static String pathRecord(String tenant, String leaf) {
        return tenant + "|" + leaf;
    }

    static String singletonRecord(String name) {
        return "J|" + name;
    }

    /** A random path, deeper paths more often: the root of the tree rarely, leaves mostly. */
    static String randomPath(Random random) {
        int r = random.nextInt(100);
        String a = LEVEL1[random.nextInt(LEVEL1.length)];
        String b = LEVEL2[random.nextInt(LEVEL2.length)];
        String c = LEVEL3[random.nextInt(LEVEL3.length)];
        if (r < 2) {
            return "/p";
        }
        if (r < 12) {
            return "/p/" + a;
        }
        if (r < 40) {
            return "/p/" + a + "/" + b;
        }
        return "/p/" + a + "/" + b + "/" + c;
    }

    /** A random path inside {@code path}'s subtree (the path itself when it is a leaf). */
    static String randomBelow(String path, Random random) {
        String p = path;
        int depth = depth(p);
        while (depth < 4 && random.nextInt(3) > 0) {
            String[] level = depth == 1 ? LEVEL1 : depth == 2 ? LEVEL2 : LEVEL3;
            p = p + "/" + level[random.nextInt(level.length)];
            depth++;
        }
        return p;
    }

    /** A random leaf under {@code path} (or the path itself when it is a leaf). */
    static String randomLeafBelow(String path, Random random) {
        String p = path;
        for (int depth = depth(p); depth < 4; depth++) {
            String[] level = depth == 1 ? LEVEL1 : depth == 2 ? LEVEL2 : LEVEL3;
            p = p + "/" + level[random.nextInt(level.length)];
        }
        return p;
    }

    private static int depth(String path) {
        return (int) path.chars().filter(ch -> ch == '/').count();
    }

    /** The conflict precondition of DESIGN §1: equal paths, or one an ancestor of the other. */
    static boolean overlaps(String a, String b) {
        return a.equals(b) || isAncestor(a, b) || isAncestor(b, a);
    }

    static boolean isAncestor(String a, String b) {
        if (a.equals("/")) {
            return !b.equals("/");
        }
        return b.length() > a.length() && b.startsWith(a) && b.charAt(a.length()) == '/';
    }
}
