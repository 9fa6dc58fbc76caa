/**
 * The fault suite's property tests at nightly size: 10,000 runs of each
 * property in test/faults/properties.test.ts (`FAULTS_RUNS`; CI runs a few
 * hundred) and 100,000 cases of the secrets property in
 * test/faults/secrets.test.ts (`SECRETS_RUNS`; CI runs 1,000; about half an
 * hour to an hour here). Run with `node scripts/fault-properties.ts`; exits
 * with the first failing status. Set either variable to change its count.
 */
import { spawnSync } from "node:child_process"

const runs = [
  { file: "test/faults/properties.test.ts", variable: "FAULTS_RUNS", count: "10000" },
  { file: "test/faults/secrets.test.ts", variable: "SECRETS_RUNS", count: "100000" }
]

for (const { file, variable, count } of runs) {
  const result = spawnSync("npx", ["vitest", "run", file], {
    stdio: "inherit",
    env: { ...process.env, [variable]: process.env[variable] ?? count }
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
