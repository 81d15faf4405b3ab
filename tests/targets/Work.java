// SPDX-License-Identifier: GPL-2.0
// Allocations and System.gc() for test_services.py t_openjdk (run as a source file):
// prints "ready", waits for a line, collects argv[0] times, prints "done".
import java.io.*;
public class Work {
    static Object sink;
    public static void main(String[] a) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        System.out.println("ready");
        in.readLine();
        for (int i = 0; i < Integer.parseInt(a[0]); i++) {
            for (int j = 0; j < 20000; j++) sink = new byte[64];
            System.gc();
        }
        System.out.println("done");
        in.readLine();
    }
}
