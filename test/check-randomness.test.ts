/**
 * The randomness check (scripts/check-randomness.ts): a random draw planted in a test file, in any of its forms,
 * is found with its file and line; names in strings and comments, and the seeded helper itself, pass; and the
 * repository's own tests pass it.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { check, drawsIn } from "../scripts/check-randomness.ts"

/** A repository of the given files, checked, then removed: `file:line message` of each draw found. */
const checked = (files: Record<string, string>): ReadonlyArray<string> => {
  const base = mkdtempSync(join(tmpdir(), "randomness-"))
  try {
    mkdirSync(join(base, "packages", "core"), { recursive: true })
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(base, path)), { recursive: true })
      writeFileSync(join(base, path), text)
    }
    return check(base).map((problem) => `${problem.file}:${problem.line} ${problem.message}`)
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}

describe("no random draw in tests outside the seeded helper", () => {
  // Each form, planted after a first line; what is found, as `line message`.
  const planted: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    ["Math.random", "const n = Math.random()\n", ["2 Math.random"]],
    [
      "randomBytes imported",
      'import { randomBytes } from "node:crypto"\nconst b = randomBytes(4)\n',
      ["2 randomBytes imported from node:crypto"]
    ],
    ["randomUUID renamed", 'import { randomUUID as id } from "crypto"\nid()\n', ["2 randomUUID imported from crypto"]],
    ["the global crypto", "const id = crypto.randomUUID()\n", ["2 crypto.randomUUID"]],
    ["globalThis.crypto", "globalThis.crypto.getRandomValues(new Uint8Array(4))\n", ["2 crypto.getRandomValues"]],
    ["a namespace import", 'import * as c from "node:crypto"\nc.randomInt(9)\n', ["3 crypto.randomInt"]],
    ["a default import", 'import c from "node:crypto"\nc["randomBytes"](2)\n', ["3 crypto.randomBytes"]],
    [
      "webcrypto",
      'import { webcrypto as w } from "node:crypto"\nw.getRandomValues(new Uint8Array(1))\n',
      ["3 crypto.getRandomValues"]
    ],
    ["destructured", "const { randomUUID } = crypto\n", ["2 crypto.randomUUID"]]
  ]
  for (const [form, text, messages] of planted) {
    it(`finds ${form} in a test file, with its line`, () => {
      assert.deepStrictEqual(
        checked({ "test/planted.test.ts": `// a test\n${text}` }),
        messages.map((message) => `test/planted.test.ts:${message}`)
      )
    })
  }

  it("looks in every test folder: test/, packages/<name>/test/, bench/test/, support and fixtures included", () => {
    const draw = "export const n = Math.random()\n"
    assert.deepStrictEqual(
      checked({
        "test/fixtures/server.ts": draw,
        "packages/core/test/support/Stores.ts": draw,
        "bench/test/x.test.ts": draw,
        "packages/core/src/Id.ts": draw,
        "examples/x.ts": draw
      }),
      [
        "test/fixtures/server.ts:1 Math.random",
        "bench/test/x.test.ts:1 Math.random",
        "packages/core/test/support/Stores.ts:1 Math.random"
      ]
    )
  })

  it("passes names in strings and comments, the seeded helper's own calls, and the helper and seed setup files", () => {
    assert.deepStrictEqual(
      drawsIn(
        "x.test.ts",
        '// Math.random is refused\nconst s = "crypto.randomUUID()"\nSeeded.randomUUID()\nSeeded.randomBytes(2)\nconst random = Math.floor\n'
      ),
      []
    )
    assert.deepStrictEqual(
      checked({
        "test/support/seeded.ts": "Math.random()\n",
        "test/setup/seed.ts": 'import { randomInt } from "node:crypto"\n'
      }),
      []
    )
  })

  it("the repository's tests draw only from the helper", () => {
    assert.deepStrictEqual(check(), [])
  })
})
