/**
 * The fault suite's property tests at nightly size: 10,000 runs of each
 * property in test/faults/properties.test.ts (CI runs a few hundred). Run
 * with `node scripts/fault-properties.ts`; exits with vitest's status.
 */
import { spawnSync } from "node:child_process"

const result = spawnSync("npx", ["vitest", "run", "test/faults/properties.test.ts"], {
  stdio: "inherit",
  env: { ...process.env, FAULTS_RUNS: process.env.FAULTS_RUNS ?? "10000" }
})
process.exit(result.status ?? 1)
