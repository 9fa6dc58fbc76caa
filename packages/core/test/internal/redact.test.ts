import { assert, describe, it } from "@effect/vitest"
import { Redacted } from "effect"
import { ExecutionFailure, ValidationError } from "../../src/ActionError.ts"
import * as Redact from "../../src/internal/redact.ts"

const secret = Redacted.make("s3cr3t/t0ken+")

describe("redact", () => {
  it("removes a secret and its URL-encoded and base64 forms from text", () => {
    const raw = `bearer s3cr3t/t0ken+ url ${encodeURIComponent("s3cr3t/t0ken+")} basic ${Buffer.from("s3cr3t/t0ken+").toString("base64")}`
    assert.strictEqual(Redact.text(raw, [secret]), "bearer [REDACTED] url [REDACTED] basic [REDACTED]")
  })

  it("scrubs an error's message, excerpt and issues, and drops a cause that mentions the secret", () => {
    const error = new ExecutionFailure({
      action: "forecast",
      message: "401 for token s3cr3t/t0ken+",
      status: 401,
      excerpt: '{"error":"bad token s3cr3t/t0ken+"}',
      cause: new Error("header Authorization: Bearer s3cr3t/t0ken+")
    })
    const clean = Redact.scrub(error, [secret])
    assert.instanceOf(clean, ExecutionFailure)
    assert.deepStrictEqual(
      { message: clean.message, excerpt: clean.excerpt, status: clean.status, cause: clean.cause, tag: clean._tag },
      {
        message: "401 for token [REDACTED]",
        excerpt: '{"error":"bad token [REDACTED]"}',
        status: 401,
        cause: undefined,
        tag: "ExecutionFailure"
      }
    )
    const validation = Redact.scrub(
      new ValidationError({ action: "a", message: "m", issues: [{ path: "x", message: "got s3cr3t/t0ken+" }] }),
      [secret]
    )
    assert.deepStrictEqual(validation.issues, [{ path: "x", message: "got [REDACTED]" }])
  })

  it("leaves errors without secrets untouched", () => {
    const error = new ExecutionFailure({ action: "a", message: "plain", cause: new Error("plain cause") })
    assert.strictEqual(Redact.scrub(error, []), error)
    assert.strictEqual(Redact.scrub(error, [secret]).cause, error.cause)
  })
})

describe("redact: nested causes", () => {
  it("drops a cause whose own cause, or an AggregateError's error, mentions the secret", () => {
    const nested = new ExecutionFailure({
      action: "a",
      message: "plain",
      cause: new Error("outer", { cause: new Error("inner with s3cr3t/t0ken+") })
    })
    assert.strictEqual(Redact.scrub(nested, [secret]).cause, undefined)
    const aggregate = new ExecutionFailure({
      action: "a",
      message: "plain",
      cause: new AggregateError([new Error("fine"), new Error("bearer s3cr3t/t0ken+")], "both")
    })
    assert.strictEqual(Redact.scrub(aggregate, [secret]).cause, undefined)
  })
})

describe("redact: cut excerpts", () => {
  it("replaces the start of a secret that an excerpt was cut through, before or after an ellipsis", () => {
    assert.strictEqual(Redact.excerpt("token s3cr3t/t0", [secret]), "token [REDACTED]")
    assert.strictEqual(Redact.excerpt("token s3cr3t/t…", [secret]), "token [REDACTED]…")
    assert.strictEqual(Redact.excerpt("whole s3cr3t/t0ken+ and more", [secret]), "whole [REDACTED] and more")
    // Fewer than three characters of a secret's start are ordinary text.
    assert.strictEqual(Redact.excerpt("ends with s3", [secret]), "ends with s3")
    const scrubbed = Redact.scrub(new ExecutionFailure({ action: "a", message: "failed", excerpt: "got s3cr3t/t0k" }), [
      secret
    ])
    assert.strictEqual(scrubbed.excerpt, "got [REDACTED]")
  })
})
