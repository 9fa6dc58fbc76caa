import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
// The sources, not dist/: a test never runs a stale build.
const node = (file: string) =>
  run(process.execPath, ["--conditions=@rolecraft/source", file], { cwd: new URL("..", import.meta.url).pathname })

describe("examples: webService", () => {
  it("web-service.ts: the seeds' forecast and temperature run against a local service; a 404 is EXECUTION", async () => {
    const { stdout } = await node("examples/web-service.ts")
    assert.include(stdout, 'forecast(São Paulo) -> {"city":"São Paulo","days":["storms","sunny","sunny"]}')
    assert.include(stdout, "temperature(Vienna) -> Vienna: 21")
    assert.match(
      stdout,
      /forecast\(Atlantis\) -> EXECUTION: forecast: GET http:\/\/127\.0\.0\.1:\d+\/v1\/forecast\/Atlantis was refused with status 404: \{"error":"no forecast for Atlantis"\}/
    )
  })
})
