/**
 * The property tests at nightly size: 10,000 runs of each property in
 * test/faults/properties.test.ts (CI runs a few hundred; FAULTS_RUNS), and
 * 100,000 runs of the stream reader's property in
 * test/providers/reader.property.test.ts (CI runs 1,000; READER_RUNS). Run
 * with `node scripts/fault-properties.ts`; exits with vitest's status.
 */
import { spawnSync } from "node:child_process"

const result = spawnSync(
  "npx",
  ["vitest", "run", "test/faults/properties.test.ts", "test/providers/reader.property.test.ts"],
  {
    stdio: "inherit",
    env: {
      ...process.env,
      FAULTS_RUNS: process.env.FAULTS_RUNS ?? "10000",
      READER_RUNS: process.env.READER_RUNS ?? "100000",
      // 100,000 streams through the SDK take minutes: the test's own timeout must not cut them off.
      READER_TIMEOUT_MS: process.env.READER_TIMEOUT_MS ?? String(4 * 60 * 60 * 1000)
    }
  }
)
process.exit(result.status ?? 1)
