"""`python manage.py configure_judge --base-url URL --model NAME [...]`: set a benchmark's active
LLM judge endpoint (created, or updated by name). The API key is never passed: `--api-key-env`
names the environment variable that holds it ("" for a local server that needs none).

    manage.py configure_judge --name openai --base-url https://api.openai.com/v1 \\
        --model gpt-4.1 --api-key-env OPENAI_API_KEY --input-price 2 --output-price 8
"""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmark.models import Benchmark
from judging.services import configure_endpoint


class Command(BaseCommand):
    help = "Set a benchmark's active LLM judge endpoint."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--benchmark", default="medvidbench", help="the benchmark's slug")
        parser.add_argument("--name", required=True)
        parser.add_argument("--base-url", required=True)
        parser.add_argument("--model", required=True)
        parser.add_argument("--api-key-env", default="OPENAI_API_KEY")
        parser.add_argument("--concurrency", type=int, default=10)
        parser.add_argument("--attempts", type=int, default=5)
        parser.add_argument("--timeout", type=float, default=30.0, help="seconds per call")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--input-price", type=Decimal, help="USD per million prompt tokens")
        parser.add_argument("--output-price", type=Decimal, help="USD per million output tokens")
        parser.add_argument("--notes", default="")

    def handle(self, *args: object, **options: object) -> None:
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"There is no benchmark {options['benchmark']!r}.")
        try:
            endpoint = configure_endpoint(
                benchmark,
                name=options["name"],
                base_url=options["base_url"],
                model=options["model"],
                api_key_env=options["api_key_env"],
                concurrency=options["concurrency"],
                max_attempts=options["attempts"],
                timeout_seconds=options["timeout"],
                temperature=options["temperature"],
                input_price_per_million=options["input_price"],
                output_price_per_million=options["output_price"],
                notes=options["notes"],
            )
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        self.stdout.write(
            f"{benchmark.name}: judge endpoint {endpoint.name!r} ({endpoint.model} at "
            f"{endpoint.base_url}) is active."
        )
