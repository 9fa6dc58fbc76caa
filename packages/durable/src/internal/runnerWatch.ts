/**
 * Every runner checks the other runners' health itself.
 *
 * Effect's cluster checks runner health in one singleton, which lives on one
 * runner's shard. When that runner is the one that dies, no runner checks
 * health until the singleton's shard moves, and the shard only moves once the
 * dead runner's heartbeat is older than `shardLockExpiration`: so half of the
 * time (with two runners) a crashed runner's shards wait out the expiration.
 *
 * This watch runs the same check on every runner: every
 * `runnerHealthCheckInterval` it pings the other runners through the given
 * `RunnerHealth` (Effect's ping over the runners' sockets: a dead process's
 * socket refuses the connection at once, and a ping is retried 5 times,
 * 500 ms apart) and records a runner that does not answer as unhealthy, and
 * one that answers again as healthy, as the singleton does. Every runner then
 * drops the dead runner from its shard assignments at its next assignment
 * refresh. The shard locks stay what they are: a shard moves only once its
 * advisory lock is free, which a dead process's closed Postgres session
 * frees at once.
 *
 * A runner records nothing while it is itself unhealthy or not registered, so
 * two runners that cannot reach each other do not leave the cluster without a
 * healthy runner.
 *
 * @internal
 */
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/** One round: the runners in storage, each other runner pinged, a changed health recorded. */
export const checkOnce: Effect.Effect<
  void,
  never,
  RunnerHealth.RunnerHealth | RunnerStorage.RunnerStorage | ShardingConfig.ShardingConfig
> = Effect.gen(function* () {
  const config = yield* ShardingConfig.ShardingConfig
  const self = config.runnerAddress
  if (Option.isNone(self)) return
  const storage = yield* RunnerStorage.RunnerStorage
  const health = yield* RunnerHealth.RunnerHealth
  const runners = yield* storage.getRunners
  const isSelf = (runner: (typeof runners)[number][0]) => Equal.equals(runner.address, self.value)
  if (!runners.some(([runner, healthy]) => healthy && isSelf(runner))) return
  yield* Effect.forEach(
    runners,
    ([runner, healthy]) =>
      isSelf(runner)
        ? Effect.void
        : Effect.flatMap(health.isAlive(runner.address), (alive) =>
            alive === healthy
              ? Effect.void
              : Effect.andThen(
                  Effect.logDebug(alive ? "Runner is healthy" : "Runner is unhealthy", runner.address),
                  storage.setRunnerHealth(runner.address, alive)
                )
          ),
    { concurrency: 10, discard: true }
  )
}).pipe(
  Effect.catchCause((cause) => Effect.logDebug("Runner health check failed", cause)),
  Effect.annotateLogs({ module: "@rolecraft/durable", fiber: "Runner watch" })
)

/** The watch, forked for the layer's lifetime, one round every `runnerHealthCheckInterval`. */
export const layer: Layer.Layer<
  never,
  never,
  RunnerHealth.RunnerHealth | RunnerStorage.RunnerStorage | ShardingConfig.ShardingConfig
> = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* ShardingConfig.ShardingConfig
    yield* checkOnce.pipe(Effect.repeat(Schedule.spaced(config.runnerHealthCheckInterval)), Effect.forkScoped)
  })
)
