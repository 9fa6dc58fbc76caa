import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
// The sources, not dist/: a test never runs a stale build.
const node = (file: string) =>
  run(process.execPath, ["--conditions=@rolecraft/source", file], { cwd: new URL("..", import.meta.url).pathname })

describe("examples (llm)", () => {
  it("llm-actions.ts: packingTip retried after a 429, summarize and translate, against the local endpoint", async () => {
    const { stdout } = await node("examples/llm-actions.ts")
    assert.include(
      stdout,
      'packingTip -> "Pack warm wool layers and a waterproof shell. Oslo in November is cold and wet." [55 tokens]'
    )
    assert.include(
      stdout,
      'summarize -> "Rolecraft builds AI agents from roles and actions in functional Effect code." [67 tokens]'
    )
    assert.include(stdout, 'translate -> "Bonjour tout le monde" [34 tokens]')
    assert.include(stdout, "The endpoint saw 4 requests")
    assert.include(stdout, "translate was sent to model gpt-4.1-mini with:")
    assert.include(
      stdout,
      '"content": "Translate the text to the target language\\n\\nInput:\\ntext: Hello world\\ntargetLanguage: French"'
    )
  })
})
