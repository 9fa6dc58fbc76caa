/**
/**
 * The property tests at nightly size: 10,000 runs of each property that reads
 * FAULTS_RUNS (CI runs a few hundred): the fault properties, null as absent,
 * MCP pagination, tool call ids and history trimming (the thread turns'
 * property runs a tenth of it: each case is a conversation of turns),
 * 100,000 runs of the stream reader's property in
 * test/providers/reader.property.test.ts (CI runs 1,000; READER_RUNS), and
 * 100,000 cases of the secrets property in test/faults/secrets.test.ts (CI
 * runs 1,000; SECRETS_RUNS; about an hour here). Run with
 * `node scripts/fault-properties.ts`; exits with the first failing status.
 * The schedule properties (test/schedules.test.ts, test/mcp-oauth-concurrency.test.ts: every stateful part under
 * drawn interleavings) run 2,000 schedules each (CI runs 8 to 40; SCHEDULE_RUNS), and the two-process OAuth test
 * 100 expiries (CI runs 3; PROCESS_ROUNDS); a failure prints its seed (replay with ROLECRAFT_TEST_SEED). Each
 * test may take up to four hours at these sizes.
 */
import { spawnSync } from "node:child_process"

const runs: ReadonlyArray<{ readonly files: ReadonlyArray<string>; readonly env: Record<string, string> }> = [
  {
    files: [
      "test/faults/properties.test.ts",
      "test/faults/null-as-absent.test.ts",
      "test/mcp-pagination.test.ts",
      "packages/core/test/ToolCallId.test.ts",
      "packages/core/test/History.test.ts",
      "test/providers/reader.property.test.ts"
    ],
    env: {
      FAULTS_RUNS: process.env.FAULTS_RUNS ?? "10000",
      READER_RUNS: process.env.READER_RUNS ?? "100000",
      // 100,000 streams through the SDK take minutes: the test's own timeout must not cut them off.
      READER_TIMEOUT_MS: process.env.READER_TIMEOUT_MS ?? String(4 * 60 * 60 * 1000)
    }
  },
  { files: ["test/faults/secrets.test.ts"], env: { SECRETS_RUNS: process.env.SECRETS_RUNS ?? "100000" } },
  {
    files: ["test/schedules.test.ts", "test/mcp-oauth-concurrency.test.ts"],
    env: {
      SCHEDULE_RUNS: process.env.SCHEDULE_RUNS ?? "2000",
      PROCESS_ROUNDS: process.env.PROCESS_ROUNDS ?? "100"
    }
  }
]

for (const { files, env } of runs) {
  const result = spawnSync("npx", ["vitest", "run", "--testTimeout=14400000", ...files], {
    stdio: "inherit",
    env: { ...process.env, ...env }
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
