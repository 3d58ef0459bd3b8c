import typer
app = typer.Typer()
def main():
    app()
