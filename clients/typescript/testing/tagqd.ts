// Starts a real tagqd for the tests, on its embedded in-memory store: built
// from this repo with `go build` (run in the repo root), or the binary named
// by TAGQD_BIN. Outside test/ so that node --test does not run it as a test
// file.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

// dist/testing/tagqd.js -> the repository root.
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

export interface Tagqd {
  /** host:port of its gRPC listener. */
  grpcAddr: string;
  /** host:port of its HTTP listener (metrics). */
  httpAddr: string;
  /** SIGTERM, then its exit code once it exited (0 when clean). */
  stop(): Promise<number | null>;
}

/** Builds (unless TAGQD_BIN) and starts tagqd on free loopback ports, with extra flags; resolves once it is ready. */
export async function startTagqd(...args: string[]): Promise<Tagqd> {
  let bin = process.env.TAGQD_BIN ?? "";
  let tmp = "";
  if (!bin) {
    tmp = mkdtempSync(join(tmpdir(), "tagqd-ts-"));
    bin = join(tmp, "tagqd");
    execFileSync("go", ["build", "-o", bin, "./cmd/tagqd"], { cwd: repoRoot, stdio: "inherit", timeout: 300_000 });
  }
  const p = spawn(bin, ["--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--sqs-addr", "127.0.0.1:0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  p.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const cleanup = () => tmp && rmSync(tmp, { recursive: true, force: true });
  const ready = new Promise<string>((resolveReady, reject) => {
    const lines = createInterface({ input: p.stdout! });
    lines.on("line", (line) => {
      if (line.startsWith("TAGQ_READY ")) resolveReady(line);
    });
    p.once("exit", (code) => reject(new Error(`tagqd exited (${code}) before it was ready:\n${stderr}`)));
    setTimeout(() => reject(new Error(`tagqd not ready after 30 s:\n${stderr}`)), 30_000).unref();
  });
  let line: string;
  try {
    line = await ready;
  } catch (e) {
    p.kill("SIGKILL");
    cleanup();
    throw e;
  }
  const fields = Object.fromEntries(line.split(" ").slice(1).map((kv) => kv.split("=") as [string, string]));
  const grpcAddr = fields["grpc"];
  const httpAddr = fields["http"];
  if (!grpcAddr || !httpAddr) throw new Error(`TAGQ_READY without addresses: ${line}`);
  return {
    grpcAddr,
    httpAddr,
    async stop() {
      let code: number | null = p.exitCode;
      if (code === null) {
        const exited = new Promise<number | null>((r) => p.once("exit", (c) => r(c)));
        p.kill("SIGTERM");
        code = await exited;
      }
      cleanup();
      return code;
    },
  };
}
