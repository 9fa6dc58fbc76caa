import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
// The sources, not dist/: a test never runs a stale build.
const node = (file: string) =>
  run(process.execPath, ["--conditions=@rolecraft/source", file], { cwd: new URL("..", import.meta.url).pathname })

describe("examples", () => {
  it("capabilities.ts: the strict editor's local summarize overrides the llm one and runs", async () => {
    const { stdout } = await node("examples/capabilities.ts")
    assert.include(stdout, "summarize: llm, from capability Summarizer")
    assert.include(stdout, "translate: llm, from capability Translator")
    assert.include(stdout, "summarize: local, from role strict-editor")
    assert.include(
      stdout,
      'strict-editor summarize -> "Rolecraft builds agents out of roles and actions, in functio..."'
    )
  })

  it("local-actions.ts: nights, a failure in an ActionResponse, and a retried flaky action", async () => {
    const { stdout } = await node("examples/local-actions.ts")
    assert.include(stdout, "nights(2026-11-02, 2026-11-05) -> 3")
    assert.include(stdout, "nights(checkIn only) -> VALIDATION: Invalid arguments for nights: checkOut: missing")
    assert.include(stdout, 'availability(h-42) -> {"hotelId":"h-42","roomsLeft":4,"attempts":3}')
  })
})
