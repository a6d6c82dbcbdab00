"""Runs across workers (evaluation/runs/shards.py): a run cut into shards gives the unsharded
run's predictions and metrics, each shard counted once even when another worker takes it
over, and progress adds up across shards."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import jobs
from evaluation.models import EvaluationRun, ModelSpec, RunShard, ServedAnswer
from evaluation.runs.execute import run_evaluation, run_shard
from evaluation.runs.services import evaluation_enqueue, evaluation_retry
from evaluation.runs.shards import part, shard_finished
from tests.evaluation.llm import build_causal
from tests.evaluation.served import CountingProxy, LlamaServer, write_gguf
from tests.workers import start_worker, stop, wait_for, worker_on_test_db

SAME = ("example", "set_id", "role", "gold", "label", "output")
CLOSE = ("probabilities", "loglikelihoods")  # batched otherwise: equal to float32's noise


def classifier(project, folder, batch_size):  # type: ignore[no-untyped-def]
    return ModelSpec.objects.create(
        project=project, name="tiny", device="cpu", batch_size=batch_size,
        kind="hf-sequence-classification", source=str(folder),
    )  # fmt: skip


def sharded(release, spec, shards):  # type: ignore[no-untyped-def]
    """A run of `shards` shards, each taken by a "worker" in turn, then merged."""
    run = evaluation_enqueue(release=release, model=spec, split="test", user=None, shards=shards)
    for shard in run.shard_jobs.order_by("-index"):  # any order
        finished = run_shard(shard.pk)
        assert finished.status == "succeeded", finished.error
        assert shard_finished(finished) == (shard.index == 0)
    return run_evaluation(run.pk)


def whole(release, spec):  # type: ignore[no-untyped-def]
    return run_evaluation(evaluation_enqueue(release=release, model=spec, split="test",
                                             user=None, send=False).pk)  # fmt: skip


def assert_same(one, other):  # type: ignore[no-untyped-def]
    assert one.status == other.status == "succeeded", (one.error, other.error)
    # A served run's usage counts the Check each shard makes of the server (and the server's
    # report is the unsharded run's): the figures are compared without them.
    drop = ("examples_per_second", "shards", "usage", "server")
    assert {k: v for k, v in one.metrics.items() if k not in drop} == {
        k: v for k, v in other.metrics.items() if k not in drop
    }
    rows = [list(run.predictions.order_by("example", "role").values(*SAME, *CLOSE))
            for run in (one, other)]  # fmt: skip
    assert len(rows[0]) == len(rows[1]) == one.total
    for mine, theirs in zip(*rows, strict=True):
        assert [mine[k] for k in SAME] == [theirs[k] for k in SAME]
        for k in CLOSE:
            assert mine[k] == pytest.approx(theirs[k], abs=1e-5)


def test_a_classifier_run_in_three_shards_equals_the_whole_run(project, released, tiny_model):
    spec = classifier(project, tiny_model, 4)
    run = sharded(released, spec, 3)
    assert_same(run, whole(released, spec))
    assert run.metrics["shards"] == 3 and run.done == run.total == 13
    # The speed shown is the whole run's, from the first shard's start, not the merge's.
    assert run.examples_per_second == run.metrics["examples_per_second"] < 1000
    sizes = [len(s.rows) for s in run.shard_jobs.order_by("index")]
    assert sum(sizes) == 13 and all(sizes)


def test_a_prompted_model_run_in_shards_equals_the_whole_run(project, released, tmp_path):
    spec = ModelSpec.objects.create(project=project, name="lm", kind="hf-causal-lm",
                                    source=str(build_causal(tmp_path / "lm")), batch_size=3,
                                    prompt="Text: {text}\nLabel:")  # fmt: skip
    assert_same(sharded(released, spec, 4), whole(released, spec))


def test_a_served_run_in_shards_asks_each_request_once(project, released, tmp_path):
    server = LlamaServer(write_gguf(tmp_path / "tiny.gguf")).start()
    proxy = CountingProxy(server.url)
    try:
        spec = ModelSpec.objects.create(
            project=project,
            name="served",
            source="tiny-llama",
            kind="openai-compatible",
            base_url=proxy.url + "/v1",
        )
        run = sharded(released, spec, 2)
        labels = tuple(" " + label for label in project.labels)  # the default prompt's words
        scoring = {p: n for p, n in proxy.answered.items() if json.loads(p).endswith(labels)}
        assert set(scoring.values()) == {1} and len(scoring) == 2 * 13
        assert ServedAnswer.objects.filter(run=run).count() == 26
        # Every request the run made, each shard's Check too, as the server counted them.
        assert run.metrics["usage"]["requests"] == sum(proxy.answered.values()) > 26
        assert run.metrics["server"]["path"] in ("next", "echo", "echo-shifted")
        assert_same(run, whole(released, spec))
    finally:
        proxy.close()
        server.stop()


def test_a_shard_taken_over_after_its_worker_died_counts_once(project, released, tiny_model):
    spec = classifier(project, tiny_model, 4)
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, shards=2)
    first = run.shard_jobs.get(index=0)
    assert jobs.claim(RunShard, first.pk) is not None  # a worker started it, then died
    stale = timezone.now() - timedelta(hours=1)
    RunShard.objects.filter(pk=first.pk).update(heartbeat_at=stale, total=7, done=3)
    for shard in run.shard_jobs.all():
        assert run_shard(shard.pk).status == "succeeded"
    first.refresh_from_db()
    assert first.attempts == 2 and first.done == first.total
    merged = run_evaluation(run.pk)
    ids = list(merged.predictions.values_list("example", "role"))
    assert len(ids) == len(set(ids)) == 13 and merged.done == 13


def test_a_failed_shard_fails_the_run_and_a_retry_runs_what_did_not_succeed(
    project, released, tiny_model
):
    spec = classifier(project, tiny_model, 4)
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, shards=3)
    shards = list(run.shard_jobs.order_by("index"))
    assert run_shard(shards[0].pk).status == "succeeded"
    ModelSpec.objects.filter(pk=spec.pk).update(source=str(tiny_model) + "-gone")
    failed = run_shard(shards[1].pk)
    assert failed.status == "failed" and not shard_finished(failed)
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("Shard 2 of 3: ")
    assert RunShard.objects.get(pk=shards[2].pk).status == "cancelled"
    ModelSpec.objects.filter(pk=spec.pk).update(source=str(tiny_model))
    evaluation_retry(run=run)
    statuses = dict(run.shard_jobs.values_list("index", "status"))
    assert statuses == {0: "succeeded", 1: "queued", 2: "queued"}
    for shard in shards[1:]:
        assert run_shard(shard.pk).status == "succeeded"
    assert run_evaluation(run.pk).status == "succeeded"


def test_shards_hold_whole_contrast_sets_and_every_example_once():
    examples = [{"set_id": f"s{n // 3}", "id": n} for n in range(20)]
    for shards in (1, 2, 3, 7):
        parts = [part(examples, i, shards) for i in range(shards)]
        assert sorted(e["id"] for p in parts for e in p) == list(range(20))
        owners = {e["set_id"]: i for i, p in enumerate(parts) for e in p}
        assert all(owners[e["set_id"]] == i for i, p in enumerate(parts) for e in p)


@pytest.mark.parametrize(
    ("kind", "shards", "said"),
    [("python", 2, "runs in one piece"), ("hf-sequence-classification", 14, "at most that many"),
     ("hf-sequence-classification", 65, "less than or equal to 64")],
)  # fmt: skip
def test_a_run_refuses_shards_it_cannot_have(project, released, client_for, people, kind,
                                             shards, said):  # fmt: skip
    spec = ModelSpec.objects.create(project=project, name="m", kind=kind, source="a:b")
    answer = client_for(people["admin"]).post("/api/evaluations/", {
        "release": released.pk, "model": spec.pk, "shards": shards}, format="json")  # fmt: skip
    assert answer.status_code == 400 and said in str(answer.json())
    assert not EvaluationRun.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_real_workers_score_a_sharded_run(project, released, tiny_model, settings, tmp_path):
    env = worker_on_test_db(settings.MEDIA_ROOT, tmp_path / "var", HF_HUB_OFFLINE="1")
    spec = classifier(project, tiny_model, 2)
    workers = [start_worker(env, tmp_path / f"worker{n}.log") for n in range(2)]
    try:
        run = evaluation_enqueue(release=released, model=spec, split="test", user=None,
                                 shards=4)  # fmt: skip
        wait_for(lambda: (run.refresh_from_db(), run.finished)[1], 180, "the run to finish")
    finally:
        for worker in workers:
            stop(worker)
    logs = "".join((tmp_path / f"worker{n}.log").read_text() for n in range(2))
    assert run.status == "succeeded", (run.error, logs[-3000:])
    assert logs.count("run_shard_task") >= 4 and run.metrics["shards"] == 4
    assert_same(run, whole(released, spec))


def test_a_run_page_shows_the_shards_at_work_before_the_merge(
    project, released, tiny_model, people, client
):
    spec = classifier(project, tiny_model, 4)
    run = evaluation_enqueue(release=released, model=spec, split="test", user=None, shards=2)
    client.force_login(people["admin"])
    progress = f"/p/{project.slug}/evaluations/{run.pk}/"
    assert ">queued<" in client.get(progress).content.decode()
    first = run_shard(run.shard_jobs.get(index=0).pk)
    run.refresh_from_db()
    page = client.get(progress).content.decode()
    assert run.status == "queued" and run.done == first.total > 0 and run.total == 13
    assert ">running<" in page and f"{run.done} of 13 examples" in page
    assert "in 2 shards" in page
