# seed
@problemName Seed
@dimensions 2
@equalLength false
@missing true
@classLabel true a b
@data
1,2,3:4,5,6:a
7,?:9,10:b
