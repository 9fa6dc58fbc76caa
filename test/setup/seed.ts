// Vitest global setup: the test run's one seed (test/support/seeded.ts draws every random value of the tests
// from it), printed at the start; ROLECRAFT_TEST_SEED=<integer> replays a run. Also an id no other run has,
// for names in stores that runs share.
import { randomInt } from "node:crypto"
import type { TestProject } from "vitest/node"
import { givenSeed, seedVariable } from "../support/seeded.ts"

export default function setup(project: TestProject): void {
  const seed = givenSeed() ?? randomInt(2 ** 31)
  project.provide("seeded", { seed, run: `${Date.now().toString(36)}-${process.pid}` })
  process.stdout.write(`test seed ${seed} (${seedVariable}=${seed} replays it)\n`)
}
