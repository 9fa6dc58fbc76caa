// Vitest setup file (runs in every test file): fast-check's runs use the test run's seed, and a failed test
// prints the seed with the command that replays it (test/support/seeded.ts).
import * as fc from "fast-check"
import { beforeEach } from "vitest"
import * as Seeded from "../support/seeded.ts"

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Seeded.seed() })

beforeEach(({ onTestFailed }) => {
  const command = Seeded.replay()
  onTestFailed(() => {
    process.stderr.write(`test seed ${Seeded.seed()}; replay: ${command}\n`)
  })
})
