import os
import sys

import requests
from dotenv import load_dotenv

load_dotenv()
key = os.getenv("WEATHER_API_KEY")
reply = requests.get("https://api.weather.example.com/v1", params={"q": sys.argv[1], "key": key})
print(reply.json()["summary"])
