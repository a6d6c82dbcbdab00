"""Score the missing cells of a results table: a run for each model of a release that has no
successful run there and none on its way, queued as any run is (evaluation_enqueue)."""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation.errors import DomainError
from annotation.models import Release
from evaluation.models import EvaluationRun, ModelSpec
from evaluation.runs.kinds import kind_of
from evaluation.runs.services import evaluation_enqueue
from evaluation.runs.shards import MAX_SHARDS
from evaluation.table.selectors import ResultsTable, TableQuery, results_table


@dataclass
class Refused:
    """A missing cell that could not be queued, and why (evaluation_enqueue's refusal)."""

    project: str
    version: str
    model: str
    reason: str


def shards_for(spec: ModelSpec, sets: int, shards: int) -> int:
    """The run's shards: as asked, but one for a model that runs in one piece, and at most
    one per contrast set."""
    if not kind_of(spec).shardable:
        return 1
    return max(1, min(shards, sets))


def results_score_missing(
    *, query: TableQuery, user: Any, shards: int = 1
) -> tuple[list[EvaluationRun], list[Refused]]:
    """Queue a run for every missing cell of the table `query` asks for; each run is sent once
    the transaction commits. A cell whose run a rule refuses (a model that draws its shots
    from this split, say) is left out with the reason; the others are queued."""
    if not 1 <= shards <= MAX_SHARDS:
        raise DomainError(f"shards must be from 1 to {MAX_SHARDS}.", field="shards")
    queued, refused = [], []
    with transaction.atomic():
        table: ResultsTable = results_table(query)
        for row, cell in table.missing:
            assert cell.spec is not None
            release = Release.objects.get(pk=row.release)
            try:
                with transaction.atomic():
                    run = evaluation_enqueue(
                        release=release,
                        model=cell.spec,
                        split=table.split,
                        user=user,
                        shards=shards_for(cell.spec, row.sets, shards),
                    )
            except DomainError as error:
                refused.append(Refused(row.project, row.version, cell.spec.name, error.message))
            else:
                queued.append(run)
    return queued, refused
