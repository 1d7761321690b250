from shop import create_app

app = create_app()
