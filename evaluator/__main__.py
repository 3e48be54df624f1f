from evaluator.cli import main

main()
