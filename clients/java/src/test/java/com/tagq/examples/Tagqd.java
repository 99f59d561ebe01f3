package com.tagq.examples;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real tagqd on its embedded in-memory store, on free loopback ports: the
 * binary named by TAGQD_BIN, else built from this repository with
 * `go build ./cmd/tagqd`. It prints one line, TAGQ_READY grpc=HOST:PORT
 * http=HOST:PORT, once it serves.
 */
final class Tagqd implements AutoCloseable {
  private final Process process;
  private final Path tmp;
  /** host:port of its gRPC listener. */
  final String grpcAddr;

  /** Starts tagqd with extra flags (e.g. --auth) and environment variables (name, value, ...). */
  Tagqd(List<String> flags, String... env) throws IOException, InterruptedException {
    tmp = Files.createTempDirectory("tagqd-java-");
    String bin = System.getenv("TAGQD_BIN");
    if (bin == null || bin.isEmpty()) {
      bin = tmp.resolve("tagqd").toString();
      // The tests run in clients/java (run_tests.sh): the repository is two up.
      Process go = new ProcessBuilder("go", "build", "-o", bin, "./cmd/tagqd")
          .directory(new File("../..")).inheritIO().start();
      if (go.waitFor() != 0) {
        throw new IOException("go build ./cmd/tagqd failed");
      }
    }
    List<String> cmd = new ArrayList<>(List.of(bin, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0",
        "--log-level", "warn"));
    cmd.addAll(flags);
    Path log = tmp.resolve("tagqd.log"); // its warnings, shown if it does not start
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    for (int i = 0; i + 1 < env.length; i += 2) {
      pb.environment().put(env[i], env[i + 1]);
    }
    process = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine(); // blocks until tagqd is ready or exits
    if (line == null || !line.startsWith("TAGQ_READY ")) {
      process.destroyForcibly();
      throw new IOException("tagqd did not start: first line " + line + "\n" + Files.readString(log));
    }
    String addr = null;
    for (String field : line.split(" ")) {
      if (field.startsWith("grpc=")) {
        addr = field.substring("grpc=".length());
      }
    }
    grpcAddr = addr;
  }

  /** SIGTERM; returns tagqd's exit code (0 when it stopped cleanly). */
  int stop() throws InterruptedException {
    process.destroy(); // SIGTERM
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return -1;
    }
    return process.exitValue();
  }

  @Override
  public void close() throws IOException {
    process.destroyForcibly(); // after stop(), a no-op
    try (var files = Files.walk(tmp)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
