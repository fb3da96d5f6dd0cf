a :: Counter(
