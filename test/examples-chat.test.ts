import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
// The sources, not dist/: a test never runs a stale build.
const node = (file: string) =>
  run(process.execPath, ["--conditions=@rolecraft/source", file], { cwd: new URL("..", import.meta.url).pathname })

describe("examples (chat)", () => {
  it("chat.ts: one turn calls a local action, a webService and server-everything's echo, then answers", async () => {
    const { stdout } = await node("examples/chat.ts")
    assert.strictEqual(
      stdout,
      [
        "user: Plan three nights in Vienna from 2 November 2026.",
        'tool call nights({"checkIn":"2026-11-02","checkOut":"2026-11-05"})',
        "  -> 3",
        'tool call forecast({"city":"Vienna"})',
        '  -> {"city":"Vienna","days":["sunny","cloudy","rain"]}',
        'tool call everything_echo({"message":"Vienna booked"})',
        "  -> Echo: Vienna booked",
        "assistant: Three nights in Vienna: sunny, then cloudy, then rain. Pack an umbrella.",
        "",
        "Tools offered: nights, forecast, everything_echo",
        "2 model calls, 622 tokens.",
        ""
      ].join("\n")
    )
  })
})
