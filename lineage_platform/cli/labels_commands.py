"""`lineage labels …`: declare labels, propagate them along lineage, show and explain them."""

from __future__ import annotations

import getpass

import click

from lineage_platform.cli import params as p

_YAML_FILE = click.Path(exists=True, dir_okay=False)


@click.group()
def labels() -> None:
    """Labels on tables and columns (APP=douyin, PII, ...) and their propagation along lineage.

    A declarations file looks like:

    \b
      labels:
        - name: ods.app_events
          labels: [APP=douyin]
        - name: ods.users.phone
          labels: [PII, SENSITIVITY=high]
    """


@labels.command()
@click.argument("name", required=False)
@click.argument("label_texts", metavar="LABEL...", nargs=-1)
@p.option("--file", "file_", command="labels declare", type=_YAML_FILE, help="YAML declarations file.")
@p.option("--by", "declared_by", command="labels declare", help="Who declares (default: the current user).")
@p.graph_url
def declare(
    name: str | None, label_texts: tuple[str, ...], file_: str | None, declared_by: str | None, graph_url
) -> None:
    """Declare labels on NAME (or every entry of --file); all or nothing."""
    from lineage_platform.graph import connect
    from lineage_platform.labels import Declaration, Label, load_declarations
    from lineage_platform.labels import declare as run_declare

    if file_:
        declarations = load_declarations(file_)
    elif name and label_texts:
        declarations = [Declaration(name.lower(), tuple(Label.parse(text) for text in label_texts))]
    else:
        raise click.UsageError("give NAME and LABEL..., or --file FILE")
    written = run_declare(connect(graph_url), declarations, declared_by=declared_by or getpass.getuser())
    click.echo(
        f"declared {written} labels on {len(declarations)} tables/columns; run `lineage labels propagate`"
    )


@labels.command()
@click.argument("name")
@click.argument("label_texts", metavar="LABEL...", nargs=-1, required=True)
@p.graph_url
def remove(name: str, label_texts: tuple[str, ...], graph_url: str | None) -> None:
    """Remove declared labels from NAME (propagate afterwards to withdraw what they spread)."""
    from lineage_platform.graph import connect
    from lineage_platform.labels import Label, undeclare

    removed = undeclare(connect(graph_url), name, [Label.parse(text) for text in label_texts])
    click.echo(
        f"removed {removed} declared labels from {name}; run `lineage labels propagate` to withdraw them"
    )


@labels.command()
@p.option("--rules", command="labels propagate", type=_YAML_FILE, help="YAML propagation rules.")
@p.option(
    "--seed",
    "seeds",
    command="labels propagate",
    multiple=True,
    help="Only propagate onward from these names (repeatable; in the env var, separated by spaces).",
)
@p.graph_url
def propagate(rules: str | None, seeds: tuple[str, ...], graph_url: str | None) -> None:
    """Spread labels along lineage until nothing changes, and store the result."""
    from lineage_platform.cli.output import console as make_console
    from lineage_platform.graph import connect
    from lineage_platform.labels import RuleSet
    from lineage_platform.labels import propagate as run_propagate

    console = make_console(stderr=True)
    with console.status("propagating labels") as status:
        summary = run_propagate(
            connect(graph_url),
            RuleSet.load(rules) if rules else RuleSet(),
            seeds=list(seeds) or None,
            progress=lambda rnd, changed: status.update(f"round {rnd}: {changed} vertices changed"),
        )
    click.echo(
        f"fixpoint after {summary.rounds} rounds in {summary.seconds:.2f}s: {summary.labelled} vertices hold "
        f"propagated labels; {summary.added} added, {summary.withdrawn} withdrawn, {summary.touched} vertices examined"
    )


@labels.command()
@click.argument("names", nargs=-1, required=True)
@p.graph_url
def show(names: tuple[str, ...], graph_url: str | None) -> None:
    """Show the labels of tables or columns and whether they were declared or propagated."""
    from lineage_platform.graph import connect
    from lineage_platform.labels.propagate import labels_of

    found = labels_of(connect(graph_url), [n.lower() for n in names])
    for name in names:
        taggings = found.get(name.lower(), [])
        text = ", ".join(f"{t.label} ({t.origin})" for t in taggings) or "no labels"
        click.echo(f"{name.lower()}: {text}")


@labels.command()
@click.argument("name")
@p.graph_url
def explain(name: str, graph_url: str | None) -> None:
    """Show where each label of NAME came from: the path and statements back to its declaration."""
    from lineage_platform.graph import connect
    from lineage_platform.labels import explain as run_explain

    explanations = run_explain(connect(graph_url), name)
    if not explanations:
        click.echo(f"{name} has no labels")
    for explanation in explanations:
        click.echo(f"{explanation.label}:")
        click.echo("\n".join("  " + line for line in explanation.describe().splitlines()))
