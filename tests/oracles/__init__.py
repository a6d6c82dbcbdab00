"""Independent implementations the tests check the product against, each written once from
its published definition (never from the product's code)."""
