/**
 * One HTTP request with exactly the headers given — `Host` and `Origin`
 * included, which fetch and client libraries set themselves — for tests of
 * what a server refuses.
 */
import { request } from "node:http"
import { Effect } from "effect"

/** What the server answered. */
export interface Answer {
  readonly status: number
  readonly body: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

/** Sends `method url` with `headers` (nothing added) and `body`; the whole answer. */
export const send = (
  method: string,
  url: string,
  headers: Readonly<Record<string, string>>,
  body?: string | undefined
): Effect.Effect<Answer, Error> =>
  Effect.callback<Answer, Error>((resume) => {
    const target = new URL(url)
    const sent = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method,
        headers,
        setHost: false
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          resume(
            Effect.succeed({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString("utf8"),
              headers: response.headers
            })
          )
        )
      }
    )
    sent.on("error", (error) => resume(Effect.fail(error)))
    sent.end(body)
  })
